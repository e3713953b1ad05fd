"""A parquet benchmark is read a batch of rows at a time: loading it never holds every image's bytes at once
(BLINK's val split is 1,901 rows of up to four images), while each image still reaches its file whole.

The file is `write_blink`'s (the HF BLINK-Benchmark/BLINK schema, cited there) with 128-pixel noise PNGs, written
in row groups of 100 rows, as Hugging Face `datasets` writes image datasets
(`config.PARQUET_ROW_GROUP_SIZE_FOR_IMAGE_DATASETS`)."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pyarrow.parquet as pq

from trompe_agents.datasets.blink import load_blink
from trompe_agents.datasets.parquet import ROWS_PER_BATCH
from trompe_agents.testing.dataset_files import write_blink


def test_loading_a_parquet_benchmark_holds_a_batch_of_rows_not_the_whole_file(tmp_path):
    source = write_blink(tmp_path / "Relative_Depth" / "val-00000-of-00001.parquet", 400, side=128)
    pq.write_table(pq.read_table(source), source, row_group_size=100)
    image_bytes = sum(len(row[f"image_{k}"]["bytes"]) for row in pq.read_table(source).to_pylist() for k in (1, 2))
    tracemalloc.start()
    try:
        dataset = load_blink(source, tmp_path / "images")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    samples = list(dataset)
    assert len(samples) == 400 and sum(Path(p).stat().st_size for s in samples for p in s.images) == image_bytes
    batch = image_bytes * ROWS_PER_BATCH / 400  # the image bytes of one batch of rows
    assert peak < 2.5 * batch < 0.5 * image_bytes, f"loading held {peak / 1e6:.1f} MB of {image_bytes / 1e6:.1f} MB"
