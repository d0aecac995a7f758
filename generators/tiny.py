"""Tiny offline pipelines: random weights from small configs, saved in the usual ``save_pretrained`` layout.

Real weights cannot be downloaded everywhere (tests, the offline demo), so every code path that loads a pipeline is
exercised with these: :func:`ensure_tiny` builds a recipe once into ``<cache_dir>/tiny/<name>`` and the loader then
opens that folder with the registry's pipeline class ``from_pretrained``, exactly as it opens real weights.

Tokenization is real: the CLIP byte-pair vocabulary shipped in the open_clip_torch wheel
(``open_clip/bpe_simple_vocab_16e6.txt.gz``) becomes a transformers ``CLIPTokenizer`` (vocab.json + merges.txt), and
the same word pieces, spelled the SentencePiece way, form the ``T5Tokenizer`` (Unigram) of the T5-based recipes, and
spelled the WordPiece way the ``BertTokenizer`` of Hunyuan-DiT's BERT.

There is a recipe for every pipeline layout of the registry (:data:`TINY_RECIPES`): SD 1.x and 2.x, LCM, SDXL (also
with SDXL Turbo's and Playground v2.5's schedulers), Kandinsky 3, the three DeepFloyd IF stages, SD3, Hunyuan-DiT,
PixArt-Sigma and -alpha, Stable Cascade, Kolors, FLUX dev and schnell, and Qwen-Image (its Qwen2 tokenizer keeps Qwen's
byte-level alphabet and chat markers but no merges: one token per byte). Their sizes follow the dummy components
of diffusers' own pipeline tests: a few channels, one or two layers, 64 px images; what the real repositories are
loaded with (a weights variant, scheduler class and configuration, VAE scaling and shift) is copied, so the loader and
the pipelines' code paths are the real ones. :mod:`generators.smoke` runs every registry model on the recipe that
mirrors it.

Each component is created under its own fixed seed inside ``torch.random.fork_rng`` so the global random state is
left alone and a rebuild gives bit-identical weights.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

CLIP_MAX_LENGTH = 77


def clip_bpe_path() -> Path:
    """The CLIP BPE merges file inside the open_clip_torch wheel."""
    import open_clip

    path = Path(open_clip.__file__).parent / "bpe_simple_vocab_16e6.txt.gz"
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing; reinstall open_clip_torch "
                                "(pip install --force-reinstall open_clip_torch).")
    return path


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2/CLIP's reversible byte → printable character table."""
    printable = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
                 + list(range(ord("®"), ord("ÿ") + 1)))
    chars = printable[:]
    extra = 0
    for byte in range(256):
        if byte not in printable:
            printable.append(byte)
            chars.append(256 + extra)
            extra += 1
    return dict(zip(printable, map(chr, chars)))


@functools.lru_cache(maxsize=1)
def _clip_merges() -> tuple[str, ...]:
    lines = gzip.open(clip_bpe_path()).read().decode("utf-8").split("\n")
    return tuple(lines[1 : 49152 - 256 - 2 + 1])


def clip_vocabulary(num_merges: int | None = None) -> tuple[dict[str, int], list[str]]:
    """(vocab, merges) of CLIP's tokenizer from the BPE file, optionally cut to the first ``num_merges`` merges.

    The full vocabulary has 49,408 entries (256 bytes, 256 word-final bytes, 48,894 merges, start and end of text),
    identical to the one CLIP, open_clip and Stable Diffusion use.
    """
    merges = list(_clip_merges())
    if num_merges is not None:
        merges = merges[:num_merges]
    tokens = list(_bytes_to_unicode().values())
    tokens += [token + "</w>" for token in tokens]
    tokens += ["".join(merge.split()) for merge in merges]
    tokens += ["<|startoftext|>", "<|endoftext|>"]
    return {token: index for index, token in enumerate(tokens)}, merges


def write_clip_vocab_files(folder: Path, num_merges: int | None = None) -> None:
    """Write CLIP's vocab.json and merges.txt (the classic slow-tokenizer files) into ``folder``."""
    vocab, merges = clip_vocabulary(num_merges)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    (folder / "merges.txt").write_text("#version: 0.2\n" + "\n".join(merges) + "\n", encoding="utf-8")


def make_clip_tokenizer(num_merges: int | None = None):
    """A transformers ``CLIPTokenizer`` on the real CLIP BPE (ids identical to CLIP's for the full vocabulary)."""
    from transformers import CLIPTokenizer

    vocab, merges = clip_vocabulary(num_merges)
    # tokenizers' BPE takes (left, right) pairs, which transformers 5 annotates as list[str]
    return CLIPTokenizer(vocab=vocab, merges=[tuple(merge.split()) for merge in merges],  # type: ignore[misc]
                         model_max_length=CLIP_MAX_LENGTH)


def t5_vocabulary(num_merges: int | None = None) -> list[tuple[str, float]]:
    """A SentencePiece-style Unigram vocabulary from the CLIP word pieces: word-final pieces become ``▁word``.

    Layout as in T5: ``<pad>``, ``</s>``, ``<unk>``, then the pieces (earlier merges score higher).
    """
    vocab, _ = clip_vocabulary(num_merges)
    pieces: dict[str, None] = {"▁": None}
    for token in vocab:
        if token.startswith("<|"):
            continue
        piece = "▁" + token[:-4] if token.endswith("</w>") else token
        pieces.setdefault(piece, None)
    scored = [(piece, -1.0 - rank / len(pieces)) for rank, piece in enumerate(pieces)]
    return [("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0), *scored]


def wordpiece_vocabulary(num_merges: int | None = None) -> dict[str, int]:
    """A BERT-style WordPiece vocabulary from the CLIP word pieces: each piece as a word start and as ``##piece``.

    Layout as in BERT: ``[PAD]``, ``[UNK]``, ``[CLS]``, ``[SEP]``, ``[MASK]``, then the pieces.
    """
    vocab, _ = clip_vocabulary(num_merges)
    pieces = {token: index for index, token in enumerate(("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"))}
    for token in vocab:
        if token.startswith("<|"):
            continue
        piece = token.removesuffix("</w>")
        for entry in (piece, "##" + piece):
            pieces.setdefault(entry, len(pieces))
    return pieces


def make_wordpiece_tokenizer(num_merges: int | None = None):
    """A transformers ``BertTokenizer`` on :func:`wordpiece_vocabulary` (Hunyuan-DiT's first text encoder is a BERT)."""
    from transformers import BertTokenizer

    return BertTokenizer(vocab=wordpiece_vocabulary(num_merges), model_max_length=CLIP_MAX_LENGTH)


def make_t5_tokenizer(num_merges: int | None = None, extra_ids: int = 0):
    from transformers import T5Tokenizer

    return T5Tokenizer(vocab=t5_vocabulary(num_merges), extra_ids=extra_ids, model_max_length=512)


def _seeded(seed: int, build: Callable):
    import torch

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return build()


def _tiny_vae(seed: int, *, block_out_channels=(16, 32, 32), latent_channels: int = 4, **config):
    """An AutoencoderKL; three blocks (the default) downsample 4x: 64 px images ↔ 16 x 16 latents."""
    from diffusers import AutoencoderKL

    blocks = len(block_out_channels)
    return _seeded(seed, lambda: AutoencoderKL(
        block_out_channels=block_out_channels, in_channels=3, out_channels=3, latent_channels=latent_channels,
        layers_per_block=1, down_block_types=("DownEncoderBlock2D",) * blocks,
        up_block_types=("UpDecoderBlock2D",) * blocks, norm_num_groups=8, sample_size=64, **config,
    ))


def _clip_text_encoder(tokenizer, seed: int, *, projection: bool = False, hidden_act: str = "quick_gelu"):
    """A two-layer CLIP text encoder (width 32) on ``tokenizer``'s vocabulary; ``projection``: with text_embeds."""
    from transformers import CLIPTextConfig, CLIPTextModel, CLIPTextModelWithProjection

    config = CLIPTextConfig(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=37, num_attention_heads=4, num_hidden_layers=2,
        max_position_embeddings=CLIP_MAX_LENGTH, bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id, projection_dim=32,
        hidden_act=hidden_act,
    )
    return _seeded(seed, lambda: (CLIPTextModelWithProjection if projection else CLIPTextModel)(config))


def _t5_encoder(tokenizer, seed: int, d_model: int = 32):
    """A two-layer T5 encoder (width ``d_model``) on ``tokenizer``'s vocabulary."""
    from transformers import T5Config, T5EncoderModel

    config = T5Config(  # type: ignore[call-arg]  # decoder_start_token_id: a key transformers 5 keeps, as T5's own
        vocab_size=len(tokenizer), d_model=d_model, d_ff=37, d_kv=8, num_layers=2, num_heads=4,
        relative_attention_num_buckets=8, pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id,
        decoder_start_token_id=tokenizer.pad_token_id,
    )
    return _seeded(seed, lambda: T5EncoderModel(config))


def _sd_unet(seed: int, *, linear_projection: bool = False, **config):
    from diffusers import UNet2DConditionModel

    heads = ({"attention_head_dim": (2, 4), "use_linear_projection": True} if linear_projection
             else {"attention_head_dim": 8})
    return _seeded(seed, lambda: UNet2DConditionModel(
        block_out_channels=(32, 64), layers_per_block=1, sample_size=16, in_channels=4, out_channels=4,
        down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"), up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"),
        norm_num_groups=32, **heads, **config,
    ))


def build_tiny_sd(seed: int = 0):
    """A Stable-Diffusion-style pipeline (UNet2DConditionModel + CLIP text encoder + VAE), about 2 M parameters."""
    from diffusers import DDIMScheduler, StableDiffusionPipeline

    tokenizer = make_clip_tokenizer()
    unet = _sd_unet(seed, cross_attention_dim=32)
    text_encoder = _clip_text_encoder(tokenizer, seed + 1)
    scheduler = DDIMScheduler(beta_start=0.00085, beta_end=0.012, beta_schedule="scaled_linear", clip_sample=False,
                              set_alpha_to_one=False, steps_offset=1)
    return StableDiffusionPipeline(
        vae=_tiny_vae(seed + 2), text_encoder=text_encoder, tokenizer=tokenizer, unet=unet, scheduler=scheduler,
        safety_checker=None, feature_extractor=None, requires_safety_checker=False,
    )


def build_tiny_sd2(seed: int = 0):
    """SD 2.x layout: linear-projection attention, an OpenCLIP-style (GELU) text encoder, v-prediction DDIM."""
    from diffusers import DDIMScheduler, StableDiffusionPipeline

    tokenizer = make_clip_tokenizer()
    scheduler = DDIMScheduler(beta_start=0.00085, beta_end=0.012, beta_schedule="scaled_linear", clip_sample=False,
                              set_alpha_to_one=False, steps_offset=1, prediction_type="v_prediction")
    return StableDiffusionPipeline(
        vae=_tiny_vae(seed + 2), text_encoder=_clip_text_encoder(tokenizer, seed + 1, hidden_act="gelu"),
        tokenizer=tokenizer, unet=_sd_unet(seed, linear_projection=True, cross_attention_dim=32), scheduler=scheduler,
        safety_checker=None, feature_extractor=None, requires_safety_checker=False,
    )


def build_tiny_lcm(seed: int = 0):
    """A Latent Consistency Model (LCM Dreamshaper v7 layout): the SD 1.x components with a UNet that takes the
    guidance scale as an embedding (``time_cond_proj_dim``) and the LCM scheduler of the real repository."""
    from diffusers import LatentConsistencyModelPipeline, LCMScheduler

    tokenizer = make_clip_tokenizer()
    scheduler = LCMScheduler(beta_start=0.00085, beta_end=0.012, beta_schedule="scaled_linear", clip_sample=False,
                             set_alpha_to_one=True, steps_offset=1, original_inference_steps=50,
                             timestep_spacing="leading", timestep_scaling=10.0)
    return LatentConsistencyModelPipeline(
        vae=_tiny_vae(seed + 2), text_encoder=_clip_text_encoder(tokenizer, seed + 1), tokenizer=tokenizer,
        unet=_sd_unet(seed, cross_attention_dim=32, time_cond_proj_dim=32), scheduler=scheduler,
        safety_checker=None, feature_extractor=None, requires_safety_checker=False,
    )


def _build_tiny_sdxl(seed: int, scheduler, **vae_config):
    """SDXL layout: two CLIP text encoders (the second with projection), a UNet with text-time added conditions."""
    from diffusers import StableDiffusionXLPipeline

    tokenizer, tokenizer_2 = make_clip_tokenizer(), make_clip_tokenizer()
    time_dim = 8  # added-condition width: six size/crop numbers of time_dim each, plus the pooled text embedding
    unet = _sd_unet(seed, linear_projection=True, cross_attention_dim=64, addition_embed_type="text_time",
                    addition_time_embed_dim=time_dim, projection_class_embeddings_input_dim=6 * time_dim + 32,
                    transformer_layers_per_block=(1, 2))
    return StableDiffusionXLPipeline(
        vae=_tiny_vae(seed + 3, **vae_config), text_encoder=_clip_text_encoder(tokenizer, seed + 1),
        text_encoder_2=_clip_text_encoder(tokenizer_2, seed + 2, projection=True, hidden_act="gelu"),
        tokenizer=tokenizer, tokenizer_2=tokenizer_2, unet=unet, scheduler=scheduler, add_watermarker=False,
    )


def build_tiny_sdxl(seed: int = 0):
    """SDXL base 1.0 (and Playground v2) layout with SDXL's Euler scheduler."""
    from diffusers import EulerDiscreteScheduler

    return _build_tiny_sdxl(seed, EulerDiscreteScheduler(
        beta_start=0.00085, beta_end=0.012, beta_schedule="scaled_linear", steps_offset=1, timestep_spacing="leading"))


def build_tiny_sdxl_refiner(seed: int = 0):
    """The SDXL 1.0 refiner layout: img2img on the base's latents, the second CLIP encoder only, a UNet whose added
    conditions hold an aesthetic score instead of the target size (five numbers); the base's VAE (same seed)."""
    from diffusers import EulerDiscreteScheduler, StableDiffusionXLImg2ImgPipeline

    tokenizer_2 = make_clip_tokenizer()
    time_dim = 8
    unet = _sd_unet(seed + 4, linear_projection=True, cross_attention_dim=32, addition_embed_type="text_time",
                    addition_time_embed_dim=time_dim, projection_class_embeddings_input_dim=5 * time_dim + 32,
                    transformer_layers_per_block=(1, 2))
    return StableDiffusionXLImg2ImgPipeline(
        vae=_tiny_vae(seed + 3), text_encoder=None, tokenizer=None,
        text_encoder_2=_clip_text_encoder(tokenizer_2, seed + 2, projection=True, hidden_act="gelu"),
        tokenizer_2=tokenizer_2, unet=unet, requires_aesthetics_score=True, force_zeros_for_empty_prompt=False,
        add_watermarker=False, scheduler=EulerDiscreteScheduler(
            beta_start=0.00085, beta_end=0.012, beta_schedule="scaled_linear", steps_offset=1,
            timestep_spacing="leading"))


def build_tiny_sdxl_turbo(seed: int = 0):
    """SDXL Turbo: the SDXL layout with its ancestral Euler scheduler on trailing timesteps (one-step sampling)."""
    from diffusers import EulerAncestralDiscreteScheduler

    return _build_tiny_sdxl(seed, EulerAncestralDiscreteScheduler(
        beta_start=0.00085, beta_end=0.012, beta_schedule="scaled_linear", timestep_spacing="trailing"))


def build_tiny_playground_v25(seed: int = 0):
    """Playground v2.5: the SDXL layout with the EDM DPM-Solver scheduler and a VAE with latent mean and std."""
    from diffusers import EDMDPMSolverMultistepScheduler

    return _build_tiny_sdxl(seed, EDMDPMSolverMultistepScheduler(sigma_data=0.5, prediction_type="epsilon"),
                            scaling_factor=0.5, latents_mean=(-1.6574, 1.886, -1.383, 2.5155),
                            latents_std=(8.4927, 5.9022, 6.5498, 5.2299))


def build_tiny_kandinsky3(seed: int = 0):
    """Kandinsky 3: Kandinsky3UNet + T5 encoder + a MoVQ (VQModel with spatial norm, 8x downsampling)."""
    from diffusers import DDPMScheduler, Kandinsky3Pipeline, Kandinsky3UNet, VQModel

    tokenizer = make_t5_tokenizer()
    unet = _seeded(seed, lambda: Kandinsky3UNet(
        in_channels=4, time_embedding_dim=4, groups=2, attention_head_dim=4, layers_per_block=3,
        block_out_channels=(32, 64), cross_attention_dim=4, encoder_hid_dim=32,
    ))
    movq = _seeded(seed + 2, lambda: VQModel(
        block_out_channels=(32, 32, 32, 32), down_block_types=("DownEncoderBlock2D",) * 3 + ("AttnDownEncoderBlock2D",),
        up_block_types=("AttnUpDecoderBlock2D",) + ("UpDecoderBlock2D",) * 3, in_channels=3, out_channels=3,
        latent_channels=4, layers_per_block=1, norm_num_groups=32, norm_type="spatial", num_vq_embeddings=12,
        vq_embed_dim=4,
    ))
    scheduler = DDPMScheduler(beta_start=0.00085, beta_end=0.012, steps_offset=1, beta_schedule="squaredcos_cap_v2",
                              clip_sample=True, thresholding=False)
    return Kandinsky3Pipeline(tokenizer=tokenizer, text_encoder=_t5_encoder(tokenizer, seed + 1), unet=unet,
                              scheduler=scheduler, movq=movq)


def _if_scheduler():
    from diffusers import DDPMScheduler

    return DDPMScheduler(num_train_timesteps=1000, beta_schedule="squaredcos_cap_v2", beta_start=0.0001, beta_end=0.02,
                         thresholding=True, dynamic_thresholding_ratio=0.95, sample_max_value=1.0,
                         prediction_type="epsilon", variance_type="learned_range")


def _if_unet(seed: int, channels: tuple[int, ...], **config):
    """A pixel-space IF UNet: T5 embeddings as added text condition, cross-attention only at the lowest level."""
    from diffusers import UNet2DConditionModel

    levels = len(channels)
    return _seeded(seed, lambda: UNet2DConditionModel(
        layers_per_block=1, block_out_channels=channels,
        down_block_types=("ResnetDownsampleBlock2D",) * (levels - 1) + ("SimpleCrossAttnDownBlock2D",),
        mid_block_type="UNetMidBlock2DSimpleCrossAttn",
        up_block_types=("SimpleCrossAttnUpBlock2D",) + ("ResnetUpsampleBlock2D",) * (levels - 1),
        out_channels=6, cross_attention_dim=32, encoder_hid_dim=32, attention_head_dim=8, addition_embed_type="text",
        addition_embed_type_num_heads=2, cross_attention_norm="group_norm", resnet_time_scale_shift="scale_shift",
        act_fn="gelu", norm_num_groups=8, **config,
    ))


def build_tiny_if_stage_1(seed: int = 0):
    """DeepFloyd IF stage I: a pixel-space UNet (64 px) conditioned on a T5 encoder, DDPM with learned variance."""
    from diffusers import IFPipeline

    tokenizer = make_t5_tokenizer()
    return IFPipeline(tokenizer=tokenizer, text_encoder=_t5_encoder(tokenizer, seed + 1),
                      unet=_if_unet(seed, (32, 32), sample_size=64, in_channels=3), scheduler=_if_scheduler(),
                      safety_checker=None, feature_extractor=None, watermarker=None, requires_safety_checker=False)


def build_tiny_if_stage_2(seed: int = 0):
    """DeepFloyd IF stage II: super-resolution UNet (image + noise, noise level as class label), 256 px.

    Its T5 is stage I's (same seed, same weights), as the real IF-II shares IF-I's T5-XXL; the cascade loads it
    without a text encoder and passes stage I's prompt embeddings.
    """
    from diffusers import DDPMScheduler, IFSuperResolutionPipeline

    tokenizer = make_t5_tokenizer()
    unet = _if_unet(seed + 10, (16, 16, 32, 32), sample_size=256, in_channels=6, class_embed_type="timestep",
                    mid_block_scale_factor=1.414, time_embedding_act_fn="gelu")
    noising = DDPMScheduler(num_train_timesteps=1000, beta_schedule="squaredcos_cap_v2", beta_start=0.0001,
                            beta_end=0.02)
    return IFSuperResolutionPipeline(
        tokenizer=tokenizer, text_encoder=_t5_encoder(tokenizer, seed + 1), unet=unet, scheduler=_if_scheduler(),
        image_noising_scheduler=noising, safety_checker=None, feature_extractor=None, watermarker=None,
        requires_safety_checker=False,
    )


def build_tiny_x4_upscaler(seed: int = 0):
    """Stable Diffusion x4 upscaler: latents at the input's size (image concatenated), a 4x VAE decoder."""
    from diffusers import DDIMScheduler, DDPMScheduler, StableDiffusionUpscalePipeline, UNet2DConditionModel

    tokenizer = make_clip_tokenizer()
    unet = _seeded(seed, lambda: UNet2DConditionModel(
        block_out_channels=(8, 16, 16, 32), layers_per_block=1, sample_size=64, in_channels=7, out_channels=4,
        down_block_types=("DownBlock2D",) * 3 + ("CrossAttnDownBlock2D",),
        up_block_types=("CrossAttnUpBlock2D",) + ("UpBlock2D",) * 3, cross_attention_dim=32,
        attention_head_dim=8, use_linear_projection=True, num_class_embeds=1000, norm_num_groups=8,
    ))
    scheduler = DDIMScheduler(beta_start=0.0001, beta_end=0.02, beta_schedule="scaled_linear", clip_sample=False,
                              set_alpha_to_one=False, steps_offset=1, prediction_type="v_prediction")
    return StableDiffusionUpscalePipeline(
        vae=_tiny_vae(seed + 2, block_out_channels=(8, 16, 16), scaling_factor=0.08333, mid_block_add_attention=False),
        text_encoder=_clip_text_encoder(tokenizer, seed + 1, hidden_act="gelu"), tokenizer=tokenizer, unet=unet,
        low_res_scheduler=DDPMScheduler(beta_schedule="scaled_linear", beta_start=0.0001, beta_end=0.02),
        scheduler=scheduler, max_noise_level=350,
    )


def build_tiny_sd3(seed: int = 0):
    """SD3 layout: an MMDiT over CLIP-L + CLIP-G (both with projection) + T5 embeddings, flow matching."""
    from diffusers import FlowMatchEulerDiscreteScheduler, SD3Transformer2DModel, StableDiffusion3Pipeline

    tokenizer, tokenizer_2, tokenizer_3 = make_clip_tokenizer(), make_clip_tokenizer(), make_t5_tokenizer()
    transformer = _seeded(seed, lambda: SD3Transformer2DModel(
        sample_size=16, patch_size=2, in_channels=4, num_layers=1, attention_head_dim=8, num_attention_heads=4,
        caption_projection_dim=32, joint_attention_dim=64, pooled_projection_dim=64, out_channels=4,
    ))
    return StableDiffusion3Pipeline(
        transformer=transformer, scheduler=FlowMatchEulerDiscreteScheduler(shift=3.0),
        vae=_tiny_vae(seed + 4, shift_factor=0.0609, scaling_factor=1.5035, use_quant_conv=False,
                      use_post_quant_conv=False),
        text_encoder=_clip_text_encoder(tokenizer, seed + 1, projection=True), tokenizer=tokenizer,
        text_encoder_2=_clip_text_encoder(tokenizer_2, seed + 2, projection=True, hidden_act="gelu"),
        tokenizer_2=tokenizer_2, text_encoder_3=_t5_encoder(tokenizer_3, seed + 3, d_model=64), tokenizer_3=tokenizer_3,
    )


def build_tiny_hunyuan_dit(seed: int = 0):
    """Hunyuan-DiT layout: a DiT over a BERT encoder (WordPiece) and a T5 encoder, v1.2 (no style condition)."""
    from diffusers import DDPMScheduler, HunyuanDiT2DModel, HunyuanDiTPipeline
    from transformers import BertConfig, BertModel

    tokenizer, tokenizer_2 = make_wordpiece_tokenizer(), make_t5_tokenizer()
    transformer = _seeded(seed, lambda: HunyuanDiT2DModel(
        sample_size=8, num_layers=2, patch_size=2, attention_head_dim=8, num_attention_heads=3, in_channels=4,
        cross_attention_dim=32, cross_attention_dim_t5=32, pooled_projection_dim=16, hidden_size=24,
        activation_fn="gelu-approximate", use_style_cond_and_image_meta_size=False,
    ))
    bert = BertConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                      intermediate_size=37, pad_token_id=tokenizer.pad_token_id)
    scheduler = DDPMScheduler(beta_start=0.00085, beta_end=0.03, beta_schedule="scaled_linear", steps_offset=1,
                              clip_sample=False, prediction_type="v_prediction")
    return HunyuanDiTPipeline(
        vae=_tiny_vae(seed + 3, block_out_channels=(16, 32, 32, 32)),  # the pipeline assumes 8x downsampling
        text_encoder=_seeded(seed + 1, lambda: BertModel(bert)),
        tokenizer=tokenizer, transformer=transformer, scheduler=scheduler, safety_checker=None,
        feature_extractor=None, requires_safety_checker=False, text_encoder_2=_t5_encoder(tokenizer_2, seed + 2),
        tokenizer_2=tokenizer_2,
    )


def _build_tiny_flux(seed: int, guidance_embeds: bool, scheduler):
    """FLUX layout: an MMDiT on 2x2-packed latents over CLIP (pooled) + T5 embeddings, rotary positions."""
    from diffusers import FluxPipeline, FluxTransformer2DModel

    tokenizer, tokenizer_2 = make_clip_tokenizer(), make_t5_tokenizer()
    transformer = _seeded(seed, lambda: FluxTransformer2DModel(
        patch_size=1, in_channels=16, num_layers=1, num_single_layers=1, attention_head_dim=16, num_attention_heads=2,
        joint_attention_dim=32, pooled_projection_dim=32, guidance_embeds=guidance_embeds, axes_dims_rope=(4, 6, 6),
    ))
    return FluxPipeline(
        scheduler=scheduler, vae=_tiny_vae(seed + 3, shift_factor=0.1159, scaling_factor=0.3611, use_quant_conv=False,
                                           use_post_quant_conv=False),
        text_encoder=_clip_text_encoder(tokenizer, seed + 1), tokenizer=tokenizer,
        text_encoder_2=_t5_encoder(tokenizer_2, seed + 2), tokenizer_2=tokenizer_2, transformer=transformer,
    )


def build_tiny_flux_dev(seed: int = 0):
    """FLUX.1 [dev]: guidance-distilled (the guidance scale is an embedding input), dynamic timestep shift."""
    from diffusers import FlowMatchEulerDiscreteScheduler

    return _build_tiny_flux(seed, True, FlowMatchEulerDiscreteScheduler(
        shift=3.0, use_dynamic_shifting=True, base_shift=0.5, max_shift=1.15, base_image_seq_len=256,
        max_image_seq_len=4096))


def build_tiny_flux_schnell(seed: int = 0):
    """FLUX.1 [schnell]: timestep-distilled, no guidance embedding, no timestep shift."""
    from diffusers import FlowMatchEulerDiscreteScheduler

    return _build_tiny_flux(seed, False, FlowMatchEulerDiscreteScheduler(shift=1.0, use_dynamic_shifting=False))


def _pixart_transformer(seed: int):
    """PixArt's diffusion transformer (adaLN-single, T5 captions) at toy size: the layout of Sigma and alpha."""
    from diffusers import PixArtTransformer2DModel

    return _seeded(seed, lambda: PixArtTransformer2DModel(
        sample_size=16, num_layers=2, patch_size=2, attention_head_dim=16, num_attention_heads=2, in_channels=4,
        out_channels=8, cross_attention_dim=32, caption_channels=32, attention_bias=True,
        activation_fn="gelu-approximate", num_embeds_ada_norm=1000, norm_type="ada_norm_single",
        norm_elementwise_affine=False, norm_eps=1e-6,
    ))


def build_tiny_pixart_sigma(seed: int = 0):
    """A PixArt-Sigma-style pipeline (diffusion transformer + T5 encoder + VAE), about 2 M parameters."""
    from diffusers import DPMSolverMultistepScheduler, PixArtSigmaPipeline

    tokenizer = make_t5_tokenizer()
    return PixArtSigmaPipeline(tokenizer=tokenizer, text_encoder=_t5_encoder(tokenizer, seed + 1),
                               vae=_tiny_vae(seed + 2), transformer=_pixart_transformer(seed),
                               scheduler=DPMSolverMultistepScheduler())


def build_tiny_pixart_alpha(seed: int = 0):
    """A PixArt-alpha-style pipeline (the PixArt-Sigma transformer layout, T5 encoder, DPM-Solver): PixArt-alpha
    XL 1024 differs from Sigma in its pipeline class (120 T5 tokens, its own resolution bins) and VAE."""
    from diffusers import DPMSolverMultistepScheduler, PixArtAlphaPipeline

    tokenizer = make_t5_tokenizer()
    return PixArtAlphaPipeline(tokenizer=tokenizer, text_encoder=_t5_encoder(tokenizer, seed + 1),
                               vae=_tiny_vae(seed + 2), transformer=_pixart_transformer(seed),
                               scheduler=DPMSolverMultistepScheduler())


def _cascade_unet(seed: int, **config):
    from diffusers import StableCascadeUNet  # type: ignore[attr-defined]  # exported, but not in diffusers' stubs

    return _seeded(seed, lambda: StableCascadeUNet(
        conditioning_dim=32, block_out_channels=(32, 32), down_num_layers_per_block=(1, 1),
        up_num_layers_per_block=(1, 1), down_blocks_repeat_mappers=(1, 1), up_blocks_repeat_mappers=(1, 1),
        clip_text_pooled_in_channels=32, clip_seq=4, self_attn=True, timestep_ratio_embedding_dim=64,
        kernel_size=3, dropout=(0.0, 0.0), **config))


def build_tiny_stable_cascade(seed: int = 0):
    """Stable Cascade (Würstchen v3) as one combined pipeline: a prior StableCascadeUNet (text -> 16-channel image
    embeddings), a decoder StableCascadeUNet (-> 4-channel latents) and a Paella VQ-GAN, each with a CLIP text
    encoder with projection. Its latents follow the real ratios (the decoder's are 10.67 times the prior's, the
    VQ-GAN upsamples 4 times), so 128 px is the smallest even size."""
    from diffusers import DDPMWuerstchenScheduler, StableCascadeCombinedPipeline
    from diffusers.pipelines.deprecated.wuerstchen.modeling_paella_vq_model import PaellaVQModel

    tokenizer = make_clip_tokenizer()
    prior = _cascade_unet(seed, in_channels=16, out_channels=16, num_attention_heads=(2, 2),
                          block_types_per_layer=(("SDCascadeResBlock", "SDCascadeTimestepBlock",
                                                  "SDCascadeAttnBlock"),) * 2,
                          clip_text_in_channels=32, clip_image_in_channels=32, patch_size=1,
                          timestep_conditioning_type=("sca", "crp"), switch_level=(False,))
    decoder = _cascade_unet(seed + 1, in_channels=4, out_channels=4, num_attention_heads=(0, 2),
                            block_types_per_layer=(("SDCascadeResBlock", "SDCascadeTimestepBlock"),
                                                   ("SDCascadeResBlock", "SDCascadeTimestepBlock",
                                                    "SDCascadeAttnBlock")),
                            patch_size=1, effnet_in_channels=16, pixel_mapper_in_channels=3,
                            timestep_conditioning_type=("sca",), switch_level=None)
    vqgan = _seeded(seed + 2, lambda: PaellaVQModel(
        in_channels=3, out_channels=3, up_down_scale_factor=2, levels=2, bottleneck_blocks=1, embed_dim=16,
        latent_channels=4, num_vq_embeddings=8, scale_factor=0.3764))
    scheduler = DDPMWuerstchenScheduler()
    return StableCascadeCombinedPipeline(
        tokenizer=tokenizer, text_encoder=_clip_text_encoder(tokenizer, seed + 3, projection=True, hidden_act="gelu"),
        decoder=decoder, scheduler=scheduler, vqgan=vqgan, prior_prior=prior,
        prior_text_encoder=_clip_text_encoder(tokenizer, seed + 4, projection=True, hidden_act="gelu"),
        prior_tokenizer=tokenizer, prior_scheduler=scheduler, prior_feature_extractor=None, prior_image_encoder=None)


def make_chatglm_tokenizer(folder: Path):
    """Kolors' ``ChatGLMTokenizer`` on a SentencePiece BPE model trained here, single-threaded (so rebuilds are
    identical), on the CLIP vocabulary's whole words; the model file is written into ``folder``."""
    import io

    import sentencepiece
    from diffusers.pipelines.kolors import ChatGLMTokenizer

    vocab, _ = clip_vocabulary()
    words = [token[:-4] for token in vocab if token.endswith("</w>") and token[:-4].isalpha()]
    sentences = [" ".join(words[i:i + 12]) for i in range(0, len(words), 12)]
    model = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(sentence_iterator=iter(sentences), model_writer=model, vocab_size=2000,
                                             model_type="bpe", character_coverage=1.0, num_threads=1, minloglevel=2)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tokenizer.model").write_bytes(model.getvalue())
    return ChatGLMTokenizer(vocab_file=str(folder / "tokenizer.model"))


def _initialised(model):
    """``model`` with every weight drawn: ChatGLMModel leaves its parameters as allocated (no init of its own under
    transformers 5), so they held whatever memory had, NaN included. Norm weights 1, biases 0, the rest N(0, 0.02)."""
    import torch

    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if "layernorm" in name:
                parameter.fill_(1.0)
            elif name.endswith(".bias"):
                parameter.zero_()
            else:
                parameter.normal_(0.0, 0.02)
    return model


def make_qwen_tokenizer():
    """A transformers ``Qwen2Tokenizer`` of Qwen's byte-level layout (GPT-2's byte alphabet, ``<|endoftext|>``,
    the chat markers ``<|im_start|>`` and ``<|im_end|>``) with no merges: every byte is one token."""
    from transformers import Qwen2Tokenizer

    tokenizer = Qwen2Tokenizer(vocab={token: i for i, token in enumerate(_bytes_to_unicode().values())}, merges=[],
                               model_max_length=1024)
    tokenizer.add_special_tokens({"additional_special_tokens": ["<|im_start|>", "<|im_end|>"]})
    return tokenizer


def build_tiny_qwen_image(seed: int = 0):
    """Qwen-Image: an MMDiT on 2x2-packed latents of the Qwen-Image (Wan-style 3D) VAE, conditioned on a two-layer
    Qwen2.5-VL (its vision tower unused) through the pipeline's chat template; the repository's flow-matching Euler
    with dynamic exponential shift (base 0.5, max 0.9, terminal 0.02). Sizes as diffusers' own pipeline test, the VAE
    narrower (base width 8)."""
    from diffusers import (
        AutoencoderKLQwenImage,
        FlowMatchEulerDiscreteScheduler,
        QwenImagePipeline,
        QwenImageTransformer2DModel,
    )
    from transformers import Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration

    tokenizer = make_qwen_tokenizer()
    n = len(tokenizer)  # the vision markers get ids past the vocabulary: text prompts never contain them
    config = Qwen2_5_VLConfig(  # type: ignore[call-arg]  # vision_token_id: kept as an extra key, as Qwen's own
        text_config={"hidden_size": 16, "intermediate_size": 16, "num_hidden_layers": 2, "num_attention_heads": 2,
                     "num_key_value_heads": 2, "vocab_size": n, "bos_token_id": tokenizer.eos_token_id,
                     "eos_token_id": tokenizer.eos_token_id, "pad_token_id": tokenizer.pad_token_id,
                     "rope_scaling": {"mrope_section": [1, 1, 2], "rope_type": "default", "type": "default"},
                     "rope_theta": 1000000.0},
        vision_config={"depth": 2, "hidden_size": 16, "intermediate_size": 16, "num_heads": 2, "out_hidden_size": 16},
        vision_start_token_id=n, vision_end_token_id=n + 1, vision_token_id=n + 2, image_token_id=n + 3,
        video_token_id=n + 4)
    return QwenImagePipeline(
        transformer=_seeded(seed, lambda: QwenImageTransformer2DModel(
            patch_size=2, in_channels=16, out_channels=4, num_layers=2, attention_head_dim=16, num_attention_heads=3,
            joint_attention_dim=16, guidance_embeds=False, axes_dims_rope=(8, 4, 4))),
        vae=_seeded(seed + 1, lambda: AutoencoderKLQwenImage(
            base_dim=8, z_dim=4, dim_mult=[1, 2, 4], num_res_blocks=1, temperal_downsample=[False, True],
            latents_mean=[0.0] * 4, latents_std=[1.0] * 4)),
        text_encoder=_seeded(seed + 2, lambda: Qwen2_5_VLForConditionalGeneration(config).eval()),
        tokenizer=tokenizer,
        scheduler=FlowMatchEulerDiscreteScheduler(
            shift=1.0, use_dynamic_shifting=True, base_shift=0.5, max_shift=0.9, base_image_seq_len=256,
            max_image_seq_len=8192, shift_terminal=0.02, time_shift_type="exponential"),
    )


def build_tiny_kolors(seed: int = 0):
    """Kolors: the SDXL UNet layout (text-time conditions) conditioned on a two-layer ChatGLM encoder (multi-query
    attention, rotary positions) with its SentencePiece tokenizer; SDXL's Euler scheduler with Kolors' beta_end."""
    import tempfile

    from diffusers import EulerDiscreteScheduler, KolorsPipeline
    from diffusers.pipelines.kolors import ChatGLMModel
    from diffusers.pipelines.kolors.text_encoder import ChatGLMConfig

    # save_pretrained copies the tokenizer's model file from where it was read, after this function returns: a
    # folder that outlives the build (the same bytes every time, so builds may share it)
    folder = Path(tempfile.gettempdir()) / f"t2i-arena-chatglm-{os.getuid()}"
    tokenizer = make_chatglm_tokenizer(folder)
    config = ChatGLMConfig(num_layers=2, padded_vocab_size=len(tokenizer) + 16, hidden_size=32,
                           ffn_hidden_size=37, kv_channels=8, num_attention_heads=4, seq_length=256,
                           multi_query_attention=True, multi_query_group_num=2, add_qkv_bias=True,
                           original_rope=True, torch_dtype="float32")
    text_encoder = _seeded(seed + 1, lambda: _initialised(ChatGLMModel(config)))
    unet = _sd_unet(seed, linear_projection=True, cross_attention_dim=32, addition_embed_type="text_time",
                    addition_time_embed_dim=8, projection_class_embeddings_input_dim=6 * 8 + 32,
                    transformer_layers_per_block=(1, 2))
    scheduler = EulerDiscreteScheduler(beta_start=0.00085, beta_end=0.014, beta_schedule="scaled_linear",
                                       steps_offset=1, timestep_spacing="leading")
    return KolorsPipeline(vae=_tiny_vae(seed + 2), text_encoder=text_encoder, tokenizer=tokenizer, unet=unet,
                          scheduler=scheduler, image_encoder=None, feature_extractor=None)


@dataclass(frozen=True)
class TinyRecipe:
    """A tiny random-weight pipeline, built once into the cache.

    ``mirrors``: the hub ids whose layout (components, scheduler, VAE configuration) it copies at toy size; the
    smoke test (:mod:`generators.smoke`) runs a registry model on the recipe that mirrors its hub id, else on the
    first recipe of its pipeline class. ``variant``: saved under that weights variant (``*.fp16.safetensors``) when
    the real repository is loaded with one, so the loader's variant path runs too. ``smoke_call_kwargs``: call
    arguments the toy size needs (a 64 px image has no resolution bin).
    """

    name: str
    pipeline_class: str
    build: Callable[[int], Any]  # seed -> the diffusers pipeline
    resolution: int  # the image side the recipe's latent size is made for
    description: str
    mirrors: tuple[str, ...] = ()
    variant: str = ""
    smoke_call_kwargs: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}))


_NO_BINS = MappingProxyType({"use_resolution_binning": False})
_NO_CAPTION_CLEANING = MappingProxyType({"clean_caption": False})  # needs bs4 and ftfy, warns without them

TINY_RECIPES: Mapping[str, TinyRecipe] = MappingProxyType({
    recipe.name: recipe
    for recipe in (
        TinyRecipe("tiny-sd", "StableDiffusionPipeline", build_tiny_sd, 64,
                   "UNet2DConditionModel + CLIP text encoder + AutoencoderKL (SD 1.x layout)",
                   mirrors=("stable-diffusion-v1-5/stable-diffusion-v1-5", "prompthero/openjourney",
                            "prompthero/openjourney-v4")),
        TinyRecipe("tiny-pixart-sigma", "PixArtSigmaPipeline", build_tiny_pixart_sigma, 64,
                   "PixArtTransformer2DModel + T5 encoder + AutoencoderKL (PixArt-Sigma layout)",
                   mirrors=("PixArt-alpha/PixArt-Sigma-XL-2-1024-MS", "PixArt-alpha/PixArt-Sigma-XL-2-512-MS"),
                   smoke_call_kwargs=MappingProxyType({**_NO_BINS, **_NO_CAPTION_CLEANING})),
        TinyRecipe("tiny-sd2", "StableDiffusionPipeline", build_tiny_sd2, 64,
                   "SD 2.x layout: linear attention projections, GELU CLIP encoder, v-prediction DDIM",
                   mirrors=("stabilityai/stable-diffusion-2-1", "stabilityai/stable-diffusion-2")),
        TinyRecipe("tiny-lcm", "LatentConsistencyModelPipeline", build_tiny_lcm, 64,
                   "SD 1.x layout with a guidance-embedding UNet and the LCM scheduler (LCM Dreamshaper v7)",
                   mirrors=("SimianLuo/LCM_Dreamshaper_v7",)),
        TinyRecipe("tiny-sdxl", "StableDiffusionXLPipeline", build_tiny_sdxl, 64,
                   "SDXL layout: two CLIP encoders, text-time conditions, Euler", variant="fp16",
                   mirrors=("stabilityai/stable-diffusion-xl-base-1.0", "playgroundai/playground-v2-1024px-aesthetic")),
        TinyRecipe("tiny-sdxl-refiner", "StableDiffusionXLImg2ImgPipeline", build_tiny_sdxl_refiner, 64,
                   "SDXL refiner layout: img2img, second CLIP encoder only, aesthetic-score conditions",
                   variant="fp16", mirrors=("stabilityai/stable-diffusion-xl-refiner-1.0",)),
        TinyRecipe("tiny-sdxl-turbo", "StableDiffusionXLPipeline", build_tiny_sdxl_turbo, 64,
                   "SDXL layout with Euler ancestral on trailing timesteps (SDXL Turbo)", variant="fp16",
                   mirrors=("stabilityai/sdxl-turbo",)),
        TinyRecipe("tiny-playground-v2.5", "StableDiffusionXLPipeline", build_tiny_playground_v25, 64,
                   "SDXL layout with EDM DPM-Solver and latent mean/std VAE (Playground v2.5)", variant="fp16",
                   mirrors=("playgroundai/playground-v2.5-1024px-aesthetic",)),
        TinyRecipe("tiny-kandinsky-3", "Kandinsky3Pipeline", build_tiny_kandinsky3, 64,
                   "Kandinsky3UNet + T5 encoder + MoVQ", variant="fp16",
                   mirrors=("kandinsky-community/kandinsky-3",)),
        TinyRecipe("tiny-if-stage-1", "IFPipeline", build_tiny_if_stage_1, 64,
                   "DeepFloyd IF stage I: pixel UNet + T5 encoder", variant="fp16",
                   mirrors=("DeepFloyd/IF-I-XL-v1.0",), smoke_call_kwargs=_NO_CAPTION_CLEANING),
        TinyRecipe("tiny-if-stage-2", "IFSuperResolutionPipeline", build_tiny_if_stage_2, 256,
                   "DeepFloyd IF stage II: pixel super-resolution UNet (64 -> 256 px)", variant="fp16",
                   mirrors=("DeepFloyd/IF-II-L-v1.0",), smoke_call_kwargs=_NO_CAPTION_CLEANING),
        TinyRecipe("tiny-x4-upscaler", "StableDiffusionUpscalePipeline", build_tiny_x4_upscaler, 1024,
                   "Stable Diffusion x4 upscaler: latent UNet on the low-res image + 4x VAE decoder",
                   mirrors=("stabilityai/stable-diffusion-x4-upscaler",)),
        TinyRecipe("tiny-sd3", "StableDiffusion3Pipeline", build_tiny_sd3, 64,
                   "SD3Transformer2DModel + CLIP-L + CLIP-G + T5 + flow-matching Euler",
                   mirrors=("stabilityai/stable-diffusion-3-medium-diffusers",)),
        TinyRecipe("tiny-hunyuan-dit", "HunyuanDiTPipeline", build_tiny_hunyuan_dit, 64,
                   "HunyuanDiT2DModel + BERT + T5 encoders", mirrors=("Tencent-Hunyuan/HunyuanDiT-v1.2-Diffusers",),
                   smoke_call_kwargs=_NO_BINS),
        TinyRecipe("tiny-flux-dev", "FluxPipeline", build_tiny_flux_dev, 64,
                   "FluxTransformer2DModel with guidance embedding + CLIP + T5 (FLUX.1 dev)",
                   mirrors=("black-forest-labs/FLUX.1-dev",)),
        TinyRecipe("tiny-pixart-alpha", "PixArtAlphaPipeline", build_tiny_pixart_alpha, 64,
                   "PixArtTransformer2DModel + T5 encoder + AutoencoderKL (PixArt-alpha layout)",
                   mirrors=("PixArt-alpha/PixArt-XL-2-1024-MS",),
                   smoke_call_kwargs=MappingProxyType({**_NO_BINS, **_NO_CAPTION_CLEANING})),
        TinyRecipe("tiny-stable-cascade", "StableCascadeCombinedPipeline", build_tiny_stable_cascade, 128,
                   "Stable Cascade: prior and decoder StableCascadeUNet + CLIP encoders + Paella VQ-GAN",
                   mirrors=("stabilityai/stable-cascade",)),
        TinyRecipe("tiny-kolors", "KolorsPipeline", build_tiny_kolors, 64,
                   "SDXL-layout UNet + ChatGLM text encoder (SentencePiece tokenizer) + AutoencoderKL (Kolors)",
                   variant="fp16", mirrors=("Kwai-Kolors/Kolors-diffusers",)),
        TinyRecipe("tiny-qwen-image", "QwenImagePipeline", build_tiny_qwen_image, 64,
                   "QwenImageTransformer2DModel + Qwen2.5-VL text encoder + Qwen-Image VAE (Qwen-Image)",
                   mirrors=("Qwen/Qwen-Image",)),
        TinyRecipe("tiny-flux-schnell", "FluxPipeline", build_tiny_flux_schnell, 64,
                   "FluxTransformer2DModel without guidance embedding + CLIP + T5 (FLUX.1 schnell)",
                   mirrors=("black-forest-labs/FLUX.1-schnell",)),
    )
})


def recipe_for(hub_id: str, pipeline_class: str) -> TinyRecipe | None:
    """The recipe that mirrors ``hub_id``, else the first one of ``pipeline_class``; None if there is none."""
    recipes = list(TINY_RECIPES.values())
    return next((r for r in recipes if hub_id and hub_id in r.mirrors), None) or next(
        (r for r in recipes if r.pipeline_class == pipeline_class), None)


def _refuse_non_main_rank(target: Path) -> None:
    """transformers writes weights only on rank 0 once torch.distributed is up, so other ranks cannot build."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized() and dist.get_rank() != 0:
        raise RuntimeError(
            f"{target} is missing and this is process {dist.get_rank()} of a process group, where transformers "
            "saves no weights. Build it first with `python -m generators tiny` (the run command does this before "
            "joining the group)."
        )


def _check_complete(folder: Path) -> None:
    index = json.loads((folder / "model_index.json").read_text())
    for component, value in index.items():
        if component.startswith("_") or not isinstance(value, list) or value[0] is None:
            continue
        if not any((folder / component).glob("*")):
            raise RuntimeError(f"saving the tiny pipeline left {folder / component} empty.")


def _clip_tokenizer_folders(folder: Path) -> list[str]:
    """The components saved as a CLIPTokenizer: they get vocab.json and merges.txt beside tokenizer.json."""
    index = json.loads((folder / "model_index.json").read_text())
    return [name for name, value in index.items() if isinstance(value, list) and value[1:] == ["CLIPTokenizer"]]


STAMP_FILE = "tiny-recipe.txt"


def _stamp(seed: int) -> str:
    """What a build is made of: this module's source (the recipes and their helpers) and the seed."""
    return f"generators/tiny.py sha256 {hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]} seed {seed}\n"


def tiny_path(cache_dir: str | Path, name: str) -> Path:
    return Path(cache_dir) / "tiny" / name


def ensure_tiny(cache_dir: str | Path, name: str, *, seed: int = 0, rebuild: bool = False) -> Path:
    """Build the tiny recipe ``name`` into ``<cache_dir>/tiny/<name>`` unless it is there; return the folder.

    The folder appears atomically (built in a temporary sibling, then renamed), so several processes may call this
    at once: one build wins, the others' identical builds are discarded. A folder built by another version of this
    module or with another seed (its :data:`STAMP_FILE` differs) is rebuilt.
    """
    if name not in TINY_RECIPES:
        raise KeyError(f"no tiny recipe {name!r}; known: {', '.join(TINY_RECIPES)}.")
    target = tiny_path(cache_dir, name)
    stamp = _stamp(seed)
    if (target / "model_index.json").exists() and not rebuild:
        if (target / STAMP_FILE).exists() and (target / STAMP_FILE).read_text() == stamp:
            return target
        rebuild = True
    if rebuild and target.exists():
        shutil.rmtree(target)
    _refuse_non_main_rank(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=target.parent))
    try:
        pipeline = TINY_RECIPES[name].build(seed)
        pipeline.save_pretrained(temporary, safe_serialization=True, variant=TINY_RECIPES[name].variant or None)
        _check_complete(temporary)
        for folder in _clip_tokenizer_folders(temporary):
            write_clip_vocab_files(temporary / folder)
        (temporary / STAMP_FILE).write_text(stamp)
        try:
            os.replace(temporary, target) if not target.exists() else None
        except OSError:  # another process renamed its build first
            pass
    finally:
        if temporary.exists():
            shutil.rmtree(temporary, ignore_errors=True)
    if not (target / "model_index.json").exists():
        raise RuntimeError(f"building {target} failed; delete it and run `python -m generators tiny` again.")
    return target
