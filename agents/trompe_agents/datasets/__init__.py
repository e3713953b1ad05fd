"""Datasets: one sample shape for probe sets and the public benchmarks, read from local files only."""

from .answers import extract, is_correct, normalise
from .base import Dataset, DatasetError, ListDataset, Sample
from .load import LOADERS, detect_format, load_dataset

__all__ = ["LOADERS", "Dataset", "DatasetError", "ListDataset", "Sample", "detect_format", "extract",
           "is_correct", "load_dataset", "normalise"]
