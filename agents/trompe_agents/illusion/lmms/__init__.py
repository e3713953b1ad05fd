"""trompe inside lmms-eval: `lmms-eval --model trompe` answers each request with the illusion agent (docs/lmms-eval.md).

`model.py` is the model lmms-eval calls, `cli.py` reads its `--model_args` into illusion-agent's options, and
`tasks/` holds task YAMLs for `--include_path`. Everything here needs the `lmms-eval` extra
(`pip install 'trompe[lmms-eval]'`). lmms-eval's samples logs are read for `illusion-agent compare` by
`illusion/lmms_samples.py`, outside this folder, since the folder builds on the illusion agent and not back.
"""
