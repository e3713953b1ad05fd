"""What lmms-eval finds in the entry-point group `lmms_eval.models`: the model `trompe` and where its class is.

Kept apart from the class: lmms-eval loads every manifest while its model registry is being built, and imports a
model's class only when that model is asked for (lmms_eval/models/registry_v2.py, `load_entrypoint_manifests`).
"""

from __future__ import annotations

from lmms_eval.models.registry_v2 import ModelManifest

MANIFEST = ModelManifest(model_id="trompe", simple_class_path="trompe_agents.illusion.lmms.cli.Trompe")
