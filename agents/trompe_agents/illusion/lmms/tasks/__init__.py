"""lmms-eval task YAMLs for `--include_path` (docs/lmms-eval.md): trompe's probe sets, with a sample set shipped.

`trompe_probes_sample` runs the eight probes in sample/ as they are; `trompe_probes.yaml` is the template for a
probe set of your own (`trompe probes generate`, or any benchmark through `trompe dataset convert`);
`trompe_datacv_task1.yaml` and `trompe_datacv_task2.yaml` run the DataCV 2026 challenge's own files (datacv.py).
"""
