"""trompe inside lmms-eval: `lmms-eval --model trompe` answers each request with the illusion agent (docs/lmms-eval.md).

`model.py` is the model lmms-eval calls, `cli.py` reads its `--model_args` into illusion-agent's options,
`samples.py` reads lmms-eval's samples logs for `illusion-agent compare`, and `tasks/` holds task YAMLs for
`--include_path`. Everything here needs the `lmms-eval` extra (`pip install 'trompe[lmms-eval]'`).
"""
