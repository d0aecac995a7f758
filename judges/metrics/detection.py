"""Open-vocabulary object detectors for SANEval scoring (protocols.md, T4).

The SANEval scorer (judges side) needs only ``detect(image, labels) -> list[Detection]``: which of the label texts
appear where, with a confidence. :class:`TransformersDetector` implements it with a transformers zero-shot detector
(OWLv2, OWL-ViT or Grounding DINO) loaded with ``from_pretrained`` from a local folder or a hub id, e.g.
``google/owlv2-base-patch16-ensemble`` or ``IDEA-Research/grounding-dino-tiny``. Tests use a tiny random OWLv2
or OWL-ViT saved with ``save_pretrained`` (:func:`build_tiny_owl`), loaded back the same way.

:class:`YoloeDetector` is the paper's detector (§3.3): ultralytics' YOLO-E, loaded from its weights file
(``yoloe-11l-seg.pt`` and the like, where they are present) and prompted with the labels' text embeddings. Those
come from ultralytics' own text encoder (MobileCLIP) by default, which needs two things no package registry has:
the ``clip`` module ultralytics installs from git+https://github.com/ultralytics/CLIP.git, and the
``mobileclip_blt.ts`` weights it downloads from its GitHub releases (so it fails offline, and ultralytics is never
let to download here: ``YOLO_OFFLINE`` is set). A transformers CLIP text model folder (``text_encoder``) whose
projection has the head's width (512) can embed the labels instead; the tests do so with a tiny random one, on a
tiny random YOLO-E built from ultralytics' own model configuration (:func:`build_tiny_yoloe`): the detection path is
ultralytics' real one, only the text encoder is a stand-in.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from PIL import Image


@dataclass(frozen=True)
class Detection:
    label: str  # one of the labels asked for
    score: float  # detector confidence in [0, 1]
    box: tuple[float, float, float, float]  # (x0, y0, x1, y1) in pixels of the input image

    @property
    def centroid(self) -> tuple[float, float]:
        x0, y0, x1, y1 = self.box
        return ((x0 + x1) / 2, (y0 + y1) / 2)


def owl_target_size(model_type: str, image: Image.Image) -> tuple[int, int]:
    """The (height, width) OWL's normalised boxes are scaled to: OWLv2 pads the image to a square at the bottom
    right before resizing, so its boxes are relative to that (side, side) square; OWL-ViT (v1) resizes without
    padding, so its boxes are relative to the image itself."""
    if model_type == "owlv2":
        side = max(image.width, image.height)
        return (side, side)
    return (image.height, image.width)


@runtime_checkable
class Detector(Protocol):
    name: str

    def detect(self, image: Image.Image, labels: Sequence[str]) -> list[Detection]: ...


class TransformersDetector:
    """A transformers zero-shot object detector; ``threshold`` is the box confidence cut-off."""

    def __init__(self, source: str | Path, *, device: str = "cpu", threshold: float = 0.3,
                 text_threshold: float = 0.25):
        from transformers import AutoModelForZeroShotObjectDetection, AutoProcessor

        if Path(str(source)).expanduser().is_absolute() and not Path(source).exists():
            raise FileNotFoundError(f"detector folder {source} does not exist; save one there with save_pretrained "
                                    "or give a hub id such as google/owlv2-base-patch16-ensemble.")
        self.processor = AutoProcessor.from_pretrained(source)
        self.model = AutoModelForZeroShotObjectDetection.from_pretrained(source).eval().to(device)
        self.model_type = self.model.config.model_type
        if self.model_type not in ("owlv2", "owlvit", "grounding-dino"):
            raise ValueError(f"{source} is a {self.model_type} model; use an OWLv2, OWL-ViT or Grounding DINO "
                             "detector.")
        self.name = f"{self.model_type}:{Path(str(source)).name}"
        self.device = device
        self.threshold = threshold
        self.text_threshold = text_threshold

    def detect(self, image: Image.Image, labels: Sequence[str]) -> list[Detection]:
        import torch

        labels = [label.strip() for label in labels if label.strip()]
        if not labels:
            return []
        image = image.convert("RGB")
        target_sizes = [(image.height, image.width)]
        if self.model_type == "grounding-dino":  # one text: "a cat. a dog."
            text = " ".join(label.lower().rstrip(".") + "." for label in labels)
            inputs = self.processor(images=image, text=text, return_tensors="pt").to(self.device)
        else:
            inputs = self.processor(images=image, text=[list(labels)], return_tensors="pt").to(self.device)
        with torch.inference_mode():
            outputs = self.model(**inputs)
        if self.model_type == "grounding-dino":
            result = self.processor.post_process_grounded_object_detection(
                outputs, inputs.input_ids, threshold=self.threshold, text_threshold=self.text_threshold,
                target_sizes=target_sizes)[0]
            names = [self._match(label, labels) for label in result.get("text_labels") or result.get("labels")]
        else:
            result = self.processor.post_process_grounded_object_detection(
                outputs, threshold=self.threshold, target_sizes=[owl_target_size(self.model_type, image)],
                text_labels=[list(labels)])[0]
            names = result["text_labels"]
        detections = []
        for name, score, box in zip(names, result["scores"].tolist(), result["boxes"].tolist()):
            x0, y0, x1, y1 = (float(min(max(v, 0.0), limit)) for v, limit in zip(box, (image.width, image.height) * 2))
            if name:  # boxes are clipped to the image; a random tiny model may give zero-width ones
                detections.append(Detection(name, float(score), (x0, y0, x1, y1)))
        return sorted(detections, key=lambda d: -d.score)

    @staticmethod
    def _match(text: str, labels: Sequence[str]) -> str:
        """Grounding DINO returns the matched phrase; map it back to the label it came from."""
        text = str(text).strip().lower()
        for label in labels:
            if label.lower() == text:
                return label
        for label in labels:
            if text and (text in label.lower() or label.lower() in text):
                return label
        return ""


def _ultralytics():
    """ultralytics' YOLOE class, never allowed to download or update anything.

    Importing ultralytics replaces ``PIL.Image.open`` for the whole process (``ultralytics.utils.patches``) with one
    that, on a file Pillow cannot identify, tries to pip-install pi-heif and then raises ModuleNotFoundError instead of
    Pillow's UnidentifiedImageError: the arena's checks of uploaded images (:mod:`datamodel.media`) would no longer
    refuse a broken file as one. Pillow's own ``open`` is put back; YOLO-E reads the arena's PNG, JPEG and WebP with it.
    """
    import os

    import PIL.Image

    os.environ.setdefault("YOLO_OFFLINE", "true")
    os.environ.setdefault("YOLO_VERBOSE", "false")
    pillow_open = PIL.Image.open
    try:
        import ultralytics.utils.patches  # noqa: F401  (imported here, so that its patch is undone below)
        from ultralytics import YOLOE
    except ImportError as error:
        raise ImportError("YOLO-E needs ultralytics: pip install '.[detection]' (ultralytics==8.4.190, AGPL-3.0).") \
            from error
    finally:
        PIL.Image.open = pillow_open
    return YOLOE


class ClipTextEmbedder:
    """Label embeddings from a transformers CLIP text model with projection (a folder), L2-normalised, shaped
    (1, labels, width) as YOLO-E's ``set_classes`` takes them."""

    def __init__(self, source: str | Path, device: str = "cpu"):
        from transformers import AutoTokenizer, CLIPTextModelWithProjection

        self.tokenizer = AutoTokenizer.from_pretrained(source)
        self.model = CLIPTextModelWithProjection.from_pretrained(source).eval().to(device)
        self.device = device

    def __call__(self, labels: Sequence[str]):
        import torch

        inputs = self.tokenizer(list(labels), padding=True, truncation=True, return_tensors="pt").to(self.device)
        with torch.inference_mode():
            embeds = self.model(**inputs).text_embeds
        return torch.nn.functional.normalize(embeds, dim=-1)[None]


class YoloeDetector:
    """YOLO-E (ultralytics) from a weights file; ``threshold`` is the box confidence cut-off; ``text_encoder`` a CLIP
    text model folder for the label embeddings (None: ultralytics' MobileCLIP, see the module docstring)."""

    def __init__(self, weights: str | Path, *, device: str = "cpu", threshold: float = 0.3,
                 text_encoder: str | Path | None = None, image_size: int = 640):
        path = Path(weights)
        if not path.is_file():
            raise FileNotFoundError(f"YOLO-E weights {path} not found; put the .pt file there (e.g. yoloe-11l-seg.pt "
                                    "from ultralytics' releases) or give a transformers detector folder instead.")
        self.model = _ultralytics()(str(path))
        self.embed = ClipTextEmbedder(text_encoder, device) if text_encoder else self._mobileclip
        self.name = f"yoloe:{path.name}" + (f"+{Path(str(text_encoder)).name}" if text_encoder else "")
        self.device, self.threshold, self.image_size = device, threshold, image_size

    def _mobileclip(self, labels: Sequence[str]):
        try:
            return self.model.get_text_pe(list(labels))
        except (ImportError, OSError, FileNotFoundError) as error:
            raise RuntimeError(
                f"YOLO-E's own text encoder (MobileCLIP) cannot run here ({type(error).__name__}: {error}): it needs "
                "the clip module (pip install git+https://github.com/ultralytics/CLIP.git) and mobileclip_blt.ts "
                "beside the weights. Install both, or pass --yoloe-text-encoder FOLDER (a transformers CLIP text "
                "model with a 512-wide projection).") from None

    def detect(self, image: Image.Image, labels: Sequence[str]) -> list[Detection]:
        labels = list(dict.fromkeys(label.strip() for label in labels if label.strip()))
        if not labels:
            return []
        self.model.set_classes(labels, self.embed(labels))
        result = self.model.predict(image.convert("RGB"), conf=self.threshold, device=self.device,
                                    imgsz=self.image_size, verbose=False)[0]
        detections = []
        for cls, conf, box in zip(result.boxes.cls.tolist(), result.boxes.conf.tolist(), result.boxes.xyxy.tolist()):
            x0, y0, x1, y1 = (float(v) for v in box)
            detections.append(Detection(result.names[int(cls)], float(conf), (x0, y0, x1, y1)))
        return sorted(detections, key=lambda d: -d.score)


def build_tiny_yoloe(path: str | Path, seed: int = 0, *, text_encoder: str | Path | None = None) -> Path:
    """A tiny random YOLO-E (ultralytics' ``yoloe-11n.yaml``, about 5 M parameters) saved to ``path`` (.pt), and, if
    ``text_encoder`` is given, a tiny random CLIP text model with a 512-wide projection saved there."""
    import torch

    path = Path(path)
    if not path.exists():
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            model = _ultralytics()("yoloe-11n.yaml")
        path.parent.mkdir(parents=True, exist_ok=True)
        model.save(str(path))
    if text_encoder is not None and not (Path(text_encoder) / "config.json").exists():
        from transformers import CLIPTextConfig, CLIPTextModelWithProjection

        from generators.tiny import make_clip_tokenizer

        tokenizer = make_clip_tokenizer()
        config = CLIPTextConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=37, num_hidden_layers=2,
                                num_attention_heads=4, max_position_embeddings=77, projection_dim=512,
                                bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                                pad_token_id=tokenizer.pad_token_id)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed + 1)
            CLIPTextModelWithProjection(config).save_pretrained(text_encoder)
        tokenizer.save_pretrained(text_encoder)
    return path


def build_tiny_owl(folder: str | Path, seed: int = 0, *, version: str = "owlv2") -> Path:
    """A tiny random OWLv2 (``version="owlv2"``) or OWL-ViT (``"owlvit"``) with the real CLIP tokenizer, saved with
    ``save_pretrained`` into ``folder``."""
    import torch
    import transformers

    from generators.tiny import make_clip_tokenizer

    prefix = {"owlv2": "Owlv2", "owlvit": "OwlViT"}.get(version)
    if prefix is None:
        raise ValueError(f"version must be owlv2 or owlvit, got {version!r}.")
    folder = Path(folder)
    if (folder / "config.json").exists():
        return folder
    tokenizer = make_clip_tokenizer()
    tokenizer.model_max_length = 16
    config = getattr(transformers, f"{prefix}Config")(
        text_config={"vocab_size": len(tokenizer), "hidden_size": 32, "intermediate_size": 37, "num_hidden_layers": 2,
                     "num_attention_heads": 2, "max_position_embeddings": 16, "bos_token_id": tokenizer.bos_token_id,
                     "eos_token_id": tokenizer.eos_token_id, "pad_token_id": 0},
        vision_config={"hidden_size": 32, "intermediate_size": 37, "num_hidden_layers": 2, "num_attention_heads": 2,
                       "image_size": 32, "patch_size": 8},
        projection_dim=32,
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = getattr(transformers, f"{prefix}ForObjectDetection")(config)
    image_processor = getattr(transformers, f"{prefix}ImageProcessor")(size={"height": 32, "width": 32})
    processor = getattr(transformers, f"{prefix}Processor")(image_processor=image_processor, tokenizer=tokenizer)
    model.save_pretrained(folder)
    processor.save_pretrained(folder)
    return folder


def build_tiny_grounding_dino(folder: str | Path, seed: int = 0) -> Path:
    """A tiny random Grounding DINO (a two-stage Swin backbone, a one-layer BERT over a 16-word vocabulary, 10
    queries), saved with ``save_pretrained`` into ``folder``: the stand-in that runs :class:`TransformersDetector`'s
    Grounding DINO path (one text "a cat. a dog.", phrases mapped back to the labels) without the real weights."""
    import torch
    from transformers import (
        BertConfig,
        BertTokenizer,
        GroundingDinoConfig,
        GroundingDinoForObjectDetection,
        GroundingDinoImageProcessor,
        GroundingDinoProcessor,
        SwinConfig,
    )

    folder = Path(folder)
    if (folder / "config.json").exists():
        return folder
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", "a", "an", "red", "green", "apple", "dog", "cat",
             "chair", "field", "tree"]
    tokenizer = BertTokenizer(vocab={word: i for i, word in enumerate(words)}, do_lower_case=True)
    # transformers 5's configs take their other settings through __post_init__'s **kwargs, which the generated
    # __init__ (huggingface_hub's strict dataclass) accepts but its type does not declare
    config = GroundingDinoConfig(  # type: ignore[call-arg]
        backbone_config=SwinConfig(  # type: ignore[call-arg]
            image_size=64, patch_size=4, embed_dim=16, depths=[1, 1], num_heads=[1, 1], window_size=4,
            out_features=["stage1", "stage2"]),
        text_config=BertConfig(vocab_size=len(words), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                               intermediate_size=37, max_position_embeddings=64),
        d_model=32, encoder_layers=1, decoder_layers=2, encoder_ffn_dim=32, decoder_ffn_dim=32,
        encoder_attention_heads=2, decoder_attention_heads=2, num_queries=10, num_feature_levels=2,
        encoder_n_points=2, decoder_n_points=2, max_text_len=32, use_timm_backbone=False, backbone=None,
        use_pretrained_backbone=False)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = GroundingDinoForObjectDetection(config).eval()
    image_processor = GroundingDinoImageProcessor(size={"shortest_edge": 64, "longest_edge": 64})
    model.save_pretrained(folder)
    GroundingDinoProcessor(image_processor=image_processor, tokenizer=tokenizer).save_pretrained(folder)
    return folder


def build_tiny_owlv2(folder: str | Path, seed: int = 0) -> Path:
    """A tiny random OWLv2 (:func:`build_tiny_owl`)."""
    return build_tiny_owl(folder, seed, version="owlv2")
