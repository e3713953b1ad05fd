"""Datasets: one sample shape for probe sets and the public benchmarks, read from local files only."""

from .answers import extract, normalise, states_answer
from .base import Dataset, DatasetError, ListDataset, Sample
from .benchmark import Benchmark, Judge, SevexTask
from .load import dataset_formats, detect_format, load_dataset

__all__ = ["Benchmark", "Dataset", "DatasetError", "Judge", "ListDataset", "Sample", "SevexTask", "dataset_formats",
           "detect_format", "extract", "load_dataset", "normalise", "states_answer"]
