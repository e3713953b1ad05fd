"""Randomly initialised checkpoints of each vision architecture, saved like real ones (tests, benchmarks).

`tiny` models build in about a second and run on CPU; `full` models have the published architectures
(Grounding DINO tiny, Depth Anything small, SAM ViT-B) with random weights, for timing only."""

from __future__ import annotations

from pathlib import Path

WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", "a", "the", "cat", "dog", "car", "red", "blue",
         "square", "circle", "person", "tree", "sky", "small", "object"]
FULL_BERT_VOCAB = 30522


def _tokenizer(vocab_size: int):
    from transformers import BertTokenizer

    words = WORDS + [f"word{i}" for i in range(vocab_size - len(WORDS))]
    return BertTokenizer(vocab={w: i for i, w in enumerate(words)})


def build_detector(folder: Path, size: str = "tiny") -> Path:
    """Grounding DINO (Swin backbone + BERT text encoder) with a word-level BERT tokenizer."""
    from transformers import GroundingDinoConfig, GroundingDinoForObjectDetection, GroundingDinoProcessor
    from transformers.models.grounding_dino.image_processing_pil_grounding_dino import (
        GroundingDinoImageProcessorPil,
    )

    if size == "full":
        config, tokenizer = GroundingDinoConfig(), _tokenizer(FULL_BERT_VOCAB)
        images = GroundingDinoImageProcessorPil()
    else:
        tokenizer = _tokenizer(len(WORDS))
        config = GroundingDinoConfig(
            backbone_config=dict(model_type="swin", embed_dim=8, depths=[1, 1, 1, 1], num_heads=[1, 1, 1, 1],
                                 window_size=4, image_size=64, out_indices=[2, 3, 4]),
            text_config=dict(model_type="bert", vocab_size=len(WORDS), hidden_size=16, num_hidden_layers=1,
                             num_attention_heads=2, intermediate_size=32, max_position_embeddings=64),
            d_model=32, encoder_layers=1, decoder_layers=2, encoder_ffn_dim=32, decoder_ffn_dim=32,
            encoder_attention_heads=2, decoder_attention_heads=2, num_queries=30, max_text_len=32,
            encoder_n_points=2, decoder_n_points=2)
        images = GroundingDinoImageProcessorPil(size={"shortest_edge": 96, "longest_edge": 160})
    GroundingDinoForObjectDetection(config).save_pretrained(folder)
    GroundingDinoProcessor(image_processor=images, tokenizer=tokenizer).save_pretrained(folder)
    return folder


def build_depth(folder: Path, size: str = "tiny") -> Path:
    """Depth Anything (DINOv2 backbone + DPT head) with its image processor settings."""
    from transformers import DepthAnythingConfig, DepthAnythingForDepthEstimation
    from transformers.models.dpt.image_processing_pil_dpt import DPTImageProcessorPil

    side = 518 if size == "full" else 56
    if size == "full":
        config = DepthAnythingConfig()
    else:
        config = DepthAnythingConfig(
            backbone_config=dict(model_type="dinov2", hidden_size=16, num_hidden_layers=2,
                                 num_attention_heads=2, intermediate_size=32, image_size=28, patch_size=14,
                                 out_indices=[1, 2], reshape_hidden_states=False),
            reassemble_hidden_size=16, neck_hidden_sizes=[8, 16], fusion_hidden_size=16, head_hidden_size=8,
            reassemble_factors=[2, 1])
    DepthAnythingForDepthEstimation(config).save_pretrained(folder)
    DPTImageProcessorPil(size={"height": side, "width": side}, keep_aspect_ratio=True, ensure_multiple_of=14,
                         resample=3, image_mean=[0.485, 0.456, 0.406],
                         image_std=[0.229, 0.224, 0.225]).save_pretrained(folder)
    return folder


def build_segmenter(folder: Path, size: str = "tiny") -> Path:
    """SAM (ViT image encoder, prompt encoder, mask decoder) with its processor."""
    from transformers import SamConfig, SamModel, SamProcessor
    from transformers.models.sam.image_processing_pil_sam import SamImageProcessorPil

    if size == "full":
        config, images = SamConfig(), SamImageProcessorPil()
    else:
        config = SamConfig(
            vision_config=dict(hidden_size=16, num_hidden_layers=2, num_attention_heads=2, mlp_dim=32,
                               output_channels=16, image_size=64, patch_size=16, global_attn_indexes=[1],
                               window_size=2, num_pos_feats=8),
            prompt_encoder_config=dict(hidden_size=16, image_size=64, patch_size=16, mask_input_channels=4),
            mask_decoder_config=dict(hidden_size=16, mlp_dim=32, num_hidden_layers=2, num_attention_heads=2,
                                     iou_head_hidden_dim=16))
        images = SamImageProcessorPil(size={"longest_edge": 64}, pad_size={"height": 64, "width": 64},
                                      mask_size={"longest_edge": 16},
                                      mask_pad_size={"height": 16, "width": 16})
    SamModel(config).save_pretrained(folder)
    SamProcessor(image_processor=images).save_pretrained(folder)
    return folder


BUILDERS = {"TROMPE_DETECTOR_MODEL": build_detector, "TROMPE_DEPTH_MODEL": build_depth,
            "TROMPE_SEGMENTER_MODEL": build_segmenter}


def build_all(root: Path, size: str = "tiny") -> dict[str, str]:
    """Every model under `root`; returns the environment settings that point the tools at them."""
    import torch

    torch.manual_seed(0)
    return {env: str(build(root / env.split("_")[1].lower(), size)) for env, build in BUILDERS.items()}
