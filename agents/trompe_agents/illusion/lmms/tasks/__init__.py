"""lmms-eval task YAMLs for `--include_path` (docs/lmms-eval.md): trompe's probe sets, with a sample set shipped.

`trompe_probes_sample` runs the eight probes in sample/ as they are; `trompe_probes.yaml` is the template for a
probe set of your own (`trompe probes generate`, or any benchmark through `trompe dataset convert`).
"""
