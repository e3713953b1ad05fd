"""Loading vision models lazily: which checkpoint, device and dtype; one forward pass per device at a time."""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trompe_server import ToolContext, ToolInputError

INSTALL_HINT = "install the vision extra: pip install 'trompe[vision]' (torch + transformers)"
DEVICE_ENV = "TROMPE_VISION_DEVICE"
DTYPE_ENV = "TROMPE_VISION_DTYPE"
DOWNLOAD_ENV = "TROMPE_VISION_DOWNLOAD"
CACHE_SIZE = 4


@dataclass(frozen=True)
class ModelSpec:
    """One kind of model a tool needs: where its checkpoint comes from and how transformers loads it."""

    role: str
    env: str
    default: str
    model_class: str
    processor_class: str


DETECTOR = ModelSpec("detector", "TROMPE_DETECTOR_MODEL", "IDEA-Research/grounding-dino-tiny",
                     "AutoModelForZeroShotObjectDetection", "AutoProcessor")
DEPTH = ModelSpec("depth estimator", "TROMPE_DEPTH_MODEL", "depth-anything/Depth-Anything-V2-Small-hf",
                  "AutoModelForDepthEstimation", "AutoImageProcessor")
SEGMENTER = ModelSpec("segmenter", "TROMPE_SEGMENTER_MODEL", "facebook/sam-vit-base",
                      "AutoModelForMaskGeneration", "AutoProcessor")
SPECS = (DETECTOR, DEPTH, SEGMENTER)


class ModelUnavailable(ToolInputError):
    """The model behind a tool cannot be loaded; the message says what to install or set."""


@dataclass
class LoadedModel:
    """A model and its processor on a device, with the lock that serialises calls on that device."""

    model: Any
    processor: Any
    device: Any
    dtype: Any
    lock: threading.Lock
    source: str

    @contextmanager
    def forward(self):
        """Hold the device for one batch of model calls, without autograd."""
        import torch

        with self.lock, torch.inference_mode():
            yield

    def pixels(self, inputs: Any) -> dict[str, Any]:
        """Processor output moved to the model's device, pixel tensors in the model's dtype."""
        return {key: value.to(self.device, self.dtype) if key == "pixel_values" else value.to(self.device)
                for key, value in inputs.items() if hasattr(value, "to")}


_cache: OrderedDict[tuple[str, str, str, str], LoadedModel] = OrderedDict()
_cache_lock = threading.Lock()
_device_locks: dict[str, threading.Lock] = {}


def import_torch():
    """torch and transformers, or an error saying how to install them."""
    try:
        import torch
        import transformers
    except ImportError as exc:
        raise ModelUnavailable(exc.name or "torch", f"not installed; {INSTALL_HINT}") from None
    return torch, transformers


def model_source(spec: ModelSpec) -> str:
    """The checkpoint for a tool: its environment variable, else the public default."""
    return os.environ.get(spec.env, "").strip() or spec.default


def pick_device(torch) -> tuple[Any, Any]:
    """CUDA, then MPS, then CPU (or TROMPE_VISION_DEVICE); bfloat16 on CUDA, float32 elsewhere."""
    wanted = os.environ.get(DEVICE_ENV, "auto").strip() or "auto"
    if wanted == "auto":
        mps = getattr(torch.backends, "mps", None)
        wanted = "cuda" if torch.cuda.is_available() else "mps" if mps and mps.is_available() else "cpu"
    try:
        device = torch.device(wanted)
    except RuntimeError:
        raise ModelUnavailable(DEVICE_ENV, f"{wanted!r} is not a device; "
                               "use auto, cpu, cuda, cuda:N or mps") from None
    dtype_name = os.environ.get(DTYPE_ENV, "auto").strip() or "auto"
    if dtype_name == "auto":
        dtype_name = "bfloat16" if device.type == "cuda" else "float32"
    if dtype_name not in ("float32", "bfloat16", "float16"):
        raise ModelUnavailable(DTYPE_ENV, f"{dtype_name!r} is not supported; "
                               "use auto, float32, bfloat16 or float16")
    return device, getattr(torch, dtype_name)


def _truthy(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def _downloads_allowed() -> bool:
    """Fetching weights is the network; it happens only when the user asked for it and the Hub is not offline."""
    if not _truthy(DOWNLOAD_ENV) or _truthy("HF_HUB_OFFLINE"):
        return False
    from huggingface_hub import constants

    return not constants.HF_HUB_OFFLINE


def _looks_like_path(source: str) -> bool:
    return source.startswith((".", "/", "~")) or "\\" in source or source.count("/") != 1


def _from_pretrained(spec: ModelSpec, source: str, transformers, device, dtype) -> tuple[Any, Any]:
    """Load from a folder, else from the local Hugging Face cache, else (only when allowed) from the Hub."""
    model_cls = getattr(transformers, spec.model_class)
    processor_cls = getattr(transformers, spec.processor_class)
    where = f"set {spec.env} to a folder saved with save_pretrained, or to a Hub id"
    path = Path(source).expanduser()
    if path.exists() or _looks_like_path(source):
        if not path.is_dir():
            raise ModelUnavailable(spec.env, f"folder {source!r} for the {spec.role} does not exist; {where}")
        tries = [dict(local_files_only=True)]
        source = str(path)
    else:
        tries = [dict(local_files_only=True)] + ([dict(local_files_only=False)] if _downloads_allowed() else [])
    error: Exception | None = None
    for options in tries:
        try:
            processor = processor_cls.from_pretrained(source, **options)
            model = model_cls.from_pretrained(source, dtype=dtype, **options)
            return model.to(device).eval(), processor
        except (OSError, ValueError) as exc:
            error = exc
    hint = "" if _downloads_allowed() else (f" (not in the local cache; downloads are off: set {DOWNLOAD_ENV}=1 "
                                            "to fetch it from the Hub once, unless HF_HUB_OFFLINE is set)")
    raise ModelUnavailable(spec.env, f"cannot load the {spec.role} {source!r}{hint}: "
                           f"{str(error).splitlines()[0] if error else 'unknown error'}; {where}")


def load(spec: ModelSpec) -> LoadedModel:
    """The model for a tool, loaded on first use and kept (a few at most, least recently used dropped)."""
    torch, transformers = import_torch()
    source = model_source(spec)
    device, dtype = pick_device(torch)
    key = (spec.role, source, str(device), str(dtype))
    with _cache_lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
        model, processor = _from_pretrained(spec, source, transformers, device, dtype)
        lock = _device_locks.setdefault(str(device), threading.Lock())
        _cache[key] = LoadedModel(model, processor, device, dtype, lock, source)
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
        return _cache[key]


def loaded(ctx: ToolContext, spec: ModelSpec, steps: int) -> LoadedModel:
    """The tool's model, with progress said around the load (the slow first call) for a call of `steps` more
    steps; a call cancelled before the model is ready ends here."""
    ctx.progress(0, steps, f"loading the {spec.role}")
    model = load(spec)
    ctx.progress(0, steps, f"{spec.role} ready")
    return model
