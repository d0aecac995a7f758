"""Token and cost estimates for judge requests (pure).

Costs recorded per request use the token counts the API returns; the dry run estimates them beforehand: text at
about 4 characters per token, images by OpenAI's published tile rule (detail ``low``: the base tokens; ``high`` and
``auto``: the image scaled to fit 2048 x 2048, then its shortest side down to 768, then base + per-tile tokens for
each 512-pixel tile). GPT-4o-mini bills images with more tokens (2,833 base, 5,667 per tile) than GPT-4o (85, 170)
so that an image costs the same in dollars on both.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from judges.request import ChatRequest

MESSAGE_OVERHEAD_TOKENS = 10


@dataclass(frozen=True)
class Prices:
    input_per_mtok: float = 0.15   # US dollars per million input tokens (gpt-4o-mini)
    output_per_mtok: float = 0.60

    def cost(self, prompt_tokens: int | None, completion_tokens: int | None) -> float:
        return ((prompt_tokens or 0) * self.input_per_mtok + (completion_tokens or 0) * self.output_per_mtok) / 1e6


def image_token_rates(model: str) -> tuple[int, int]:
    """(base, per-tile) image tokens of ``model``."""
    return (2833, 5667) if "mini" in model.lower() else (85, 170)


def image_tokens(width: int, height: int, detail: str, model: str) -> int:
    base, per_tile = image_token_rates(model)
    if detail == "low":
        return base
    w, h = float(width), float(height)
    if max(w, h) > 2048:
        scale = 2048 / max(w, h)
        w, h = w * scale, h * scale
    if min(w, h) > 768:
        scale = 768 / min(w, h)
        w, h = w * scale, h * scale
    tiles = max(1, math.ceil(w / 512)) * max(1, math.ceil(h / 512))
    return base + per_tile * tiles


def estimate_prompt_tokens(request: ChatRequest, model: str) -> int:
    text = sum(len(part) for part in request.parts if isinstance(part, str))
    images = sum(image_tokens(image.width, image.height, request.detail, model) for image in request.images)
    return MESSAGE_OVERHEAD_TOKENS + math.ceil(text / 4) + images


def estimate_cost(request: ChatRequest, model: str, prices: Prices) -> float:
    return prices.cost(estimate_prompt_tokens(request, model), request.expected_output_tokens)
