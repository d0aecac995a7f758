"""``python -m judges metrics``: compute model-based metrics for a suite into the ``metrics`` table.

    python -m judges metrics --suite taxonomy --metrics clip,fid,is,reward,consistency
    python -m judges metrics --suite commonsense --metrics clip          # also the CLIP pair accuracy (T2)
    python -m judges metrics --suite taxonomy --tiny                     # offline: tiny random stand-in scorers

Each metric's scorer is built on its own: a metric whose optional extra (torch-fidelity for FID/IS, ImageReward
for ``reward``) or weights are missing is skipped with one line on stderr saying what to install or which flag to
set, and the other metrics still run. Exit status: 0 when at least one requested metric ran; 3 when none could
(or, with ``--strict``, when any was skipped); 2 for a usage or configuration error.

The library function is :func:`compute_metrics`; :func:`main` parses, builds the scorers and prints.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Sequence

import sqlite_utils

from datamodel.media import MediaStore
from judges.metrics.clip_scores import EncoderCounts

METRICS = ("clip", "commonsense", "fid", "is", "reward", "consistency")
DEFAULT_METRICS = "clip,fid,is,reward,consistency"
# what building a scorer raises when an optional extra or weights file is missing (or weights cannot be downloaded)
UNAVAILABLE = (ImportError, OSError, RuntimeError)
EXIT_NOTHING_RAN = 3


@dataclass
class Scorers:
    """What computes each metric; None where not needed. Build with :func:`real_scorers` or :func:`tiny_scorers`."""

    clip: object | None = None  # judges.metrics.clip_scores.ClipEncoder
    fid_network: object | None = None
    is_network: object | None = None
    feature_scorer: str = ""  # scorer name of the FID/IS rows
    feature_version: str = ""
    image_size: int = 299
    reward: object | None = None  # judges.metrics.reward.RewardModel
    unavailable: dict[str, str] = field(default_factory=dict)  # metric -> why it cannot run (what to install or set)


def tiny_scorers(cache_dir: str | Path, *, device: str = "cpu", batch_size: int = 32) -> Scorers:
    """Tiny random stand-ins for every metric (offline demo and tests); their rows are named ``...tiny...``."""
    from judges.metrics.clip_scores import build_tiny_clip, load_clip
    from judges.metrics.fid_is import tiny_feature_network
    from judges.metrics.reward import ClipRewardStandIn

    folder = build_tiny_clip(Path(cache_dir) / "tiny" / "open-clip-tiny")
    clip = load_clip(f"local-dir:{folder}", None, device=device, batch_size=batch_size)
    return Scorers(clip=clip, fid_network=tiny_feature_network(16, seed=1),
                   is_network=tiny_feature_network(10, seed=2, scale=4.0),
                   feature_scorer="tiny-random-features", feature_version="random conv net, seeds 1 and 2",
                   image_size=64, reward=ClipRewardStandIn(clip))


def real_scorers(metrics: Sequence[str], args) -> Scorers:
    """The benchmark's scorers, built only for the metrics asked for, each on its own: a metric whose extra or
    weights are missing is left out and its reason put in ``Scorers.unavailable``."""
    metrics = set(metrics)
    scorers = Scorers(image_size=args.image_size)

    def build(names: Sequence[str], make: Callable[[], None]) -> None:
        names = [name for name in names if name in metrics and name not in scorers.unavailable]
        if not names:
            return
        try:
            make()
        except UNAVAILABLE as error:
            scorers.unavailable.update({name: str(error) for name in names})

    def clip() -> None:
        from judges.metrics.clip_scores import load_clip

        scorers.clip = load_clip(args.clip_model, args.clip_pretrained, device=args.device, batch_size=args.batch_size)

    build(["clip", "commonsense"] + (["reward"] if args.reward_model == "clip" else []), clip)

    def network(name: str, feature: str) -> Callable[[], None]:
        def make() -> None:
            import torchmetrics

            from judges.metrics.fid_is import inception_network

            setattr(scorers, f"{name}_network", inception_network(feature, args.inception_weights,
                                                                  allow_download=args.inception_download))
            scorers.feature_scorer = "inception-v3"
            scorers.feature_version = (f"torchmetrics {torchmetrics.__version__}; "
                                       f"{args.inception_weights or 'torch-fidelity weights'}")
        return make

    build(["fid"], network("fid", "2048"))
    build(["is"], network("is", "logits_unbiased"))

    def reward() -> None:
        if args.reward_model == "clip":
            from judges.metrics.reward import ClipRewardStandIn

            scorers.reward = ClipRewardStandIn(scorers.clip)
        else:
            from judges.metrics.reward import ImageRewardModel

            scorers.reward = ImageRewardModel(args.reward_checkpoint, med_config=args.reward_med_config,
                                              device=args.device)

    build(["reward"], reward)
    return scorers


def compute_metrics(db: sqlite_utils.Database, media: MediaStore, suite: str, metrics: Sequence[str],
                    scorers: Scorers, *, models: Sequence[str] | None = None, fid_reference: str | None = "retrieval",
                    fid_reference_folder: str | None = None, consistency_source: str = "clip_score",
                    consistency_scorer: str | None = None, progress: bool = False) -> dict:
    """Run the ``metrics`` on ``suite`` with ``scorers``; return a summary per metric (also written to the DB).

    ``clip`` on the commonsense suite also runs the commonsense CLIP evaluator. ``fid_reference="*"`` uses all
    models' images of the suite pooled as the reference set (the demo has no retrieval images). A metric in
    ``scorers.unavailable``, or ``consistency`` without stored source scores, is not run: ``summary["skipped"]``
    maps it to the reason. The reward comparisons are stored (``reward.store_comparisons``) and returned.
    """
    unknown = sorted(set(metrics) - set(METRICS))
    if unknown:
        raise ValueError(f"unknown metric(s) {', '.join(unknown)}; choose from {', '.join(METRICS)}.")
    skipped = {metric: why for metric, why in scorers.unavailable.items() if metric in metrics}
    metrics = [metric for metric in metrics if metric not in skipped]
    summary: dict = {}
    before = replace(scorers.clip.counts) if scorers.clip is not None else None
    if "clip" in metrics:
        from judges.metrics.clip_scores import score_clip

        report = score_clip(db, media, scorers.clip, suite, models=models, progress=progress)
        summary["clip"] = {"images": report.images, "skipped": report.skipped, "rows": report.rows}
    if "commonsense" in metrics or ("clip" in metrics and suite == "commonsense"):
        from judges.metrics.commonsense_clip import score_commonsense

        report = score_commonsense(db, media, scorers.clip, suite=suite, models=models, progress=progress)
        summary["commonsense"] = {"images": report.images, "items": report.items, "accuracy": report.accuracy,
                                  "incomplete_pairs": report.incomplete}
    if before is not None and scorers.clip.counts.text_lookups > before.text_lookups:
        now = scorers.clip.counts
        summary["clip_encoder_calls"] = EncoderCounts(**{
            name: getattr(now, name) - getattr(before, name) for name in vars(now)}).summary()
    if {"fid", "is"} & set(metrics):
        from judges.metrics.fid_is import score_fid_is

        pooled = fid_reference == "*"
        report = score_fid_is(
            db, media, suite, fid_network=scorers.fid_network if "fid" in metrics else None,
            is_network=scorers.is_network if "is" in metrics else None, scorer=scorers.feature_scorer,
            scorer_version=scorers.feature_version, reference_model=None if pooled else fid_reference,
            reference_folder=fid_reference_folder, pooled_reference=pooled, models=models,
            image_size=scorers.image_size, progress=progress,
        )
        summary["fid"], summary["is"], summary["fid_is_skipped"] = report.fid, report.inception_score, report.skipped
    if "reward" in metrics:
        from judges.metrics.reward import reward_comparisons, score_rewards, store_comparisons

        summary["reward"] = {"images": score_rewards(db, media, scorers.reward, suite, models=models, progress=progress)}
        table = reward_comparisons(db, scorer=scorers.reward.name, suite=suite)
        store_comparisons(db, table, scorer=scorers.reward.name, suite=suite, version=scorers.reward.version)
        summary["reward_mann_whitney"] = table
    if "consistency" in metrics:
        from judges.metrics.consistency import score_consistency

        try:
            results = score_consistency(db, suite, source=consistency_source, scorer=consistency_scorer,
                                        progress=progress)
        except LookupError as error:  # nothing stored to take spreads of: say how to make it
            skipped["consistency"] = str(error)
        else:
            summary["consistency"] = results["std"]
    if skipped:
        summary["skipped"] = skipped
    return summary


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m judges metrics", description=__doc__.split("\n")[0])
    parser.add_argument("--config", help="TOML settings file (default: $ARENA_CONFIG or ./arena.toml)")
    parser.add_argument("--db", dest="db_path", help="database file (default: the db_path setting)")
    parser.add_argument("--media-dir", help="media folder (default: the media_dir setting)")
    parser.add_argument("--cache-dir", help="cache folder for the tiny stand-ins (default: the cache_dir setting)")
    parser.add_argument("--suite", required=True, help="suite whose images to score")
    parser.add_argument("--metrics", default=DEFAULT_METRICS, help=f"comma-separated, from {', '.join(METRICS)} "
                        f"(default {DEFAULT_METRICS})")
    parser.add_argument("--models", help="only these models (comma-separated)")
    parser.add_argument("--tiny", action="store_true", help="tiny random stand-in scorers (offline demo, tests)")
    parser.add_argument("--device", default="cpu", help="torch device (default cpu)")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--clip-model", default="ViT-B-32", help="open_clip architecture or local-dir:/folder")
    parser.add_argument("--clip-pretrained", default="openai", help="open_clip tag or a local checkpoint file")
    parser.add_argument("--fid-reference", default="retrieval",
                        help="model whose images are the FID reference (default retrieval; * pools all models)")
    parser.add_argument("--fid-reference-folder", help="folder of reference images instead of a model")
    parser.add_argument("--inception-weights",
                        help="local weights-inception-2015-12-05-6726825d.pth for FID/IS (needs torch-fidelity)")
    parser.add_argument("--inception-download", action="store_true",
                        help="let torch-fidelity download the Inception weights when no local file is found")
    parser.add_argument("--image-size", type=int, default=299, help="side images are resized to for FID/IS")
    parser.add_argument("--reward-model", choices=["imagereward", "clip"], default="imagereward",
                        help="imagereward (optional extra, see judges/metrics/reward.py) or clip (a stand-in)")
    parser.add_argument("--reward-checkpoint", default="ImageReward-v1.0", help="ImageReward name or local .pt file")
    parser.add_argument("--reward-med-config", help="ImageReward med_config.json (local, for offline machines)")
    parser.add_argument("--consistency-source", default="clip_score", help="per-image metric to take spreads of")
    parser.add_argument("--consistency-scorer", help="scorer of the source metric (default: the most used)")
    parser.add_argument("--quiet", action="store_true",
                        help="no progress bars (they are also off when stderr is not a terminal)")
    parser.add_argument("--strict", action="store_true",
                        help=f"exit with status {EXIT_NOTHING_RAN} when any requested metric is skipped")
    return parser


def _print_summary(summary: dict) -> None:
    import pandas as pd

    for key, value in summary.items():
        if key == "skipped":
            continue
        if isinstance(value, pd.DataFrame):
            print(f"{key}:")
            print(value.to_string(index=False) if not value.empty else "  (nothing to compare)")
        else:
            print(f"{key}: {value}")


def main(argv: list[str] | None = None) -> int:
    from datamodel.settings import SettingsError, load_settings
    from datamodel.connection import connect

    args = build_parser().parse_args(argv)
    metrics = list(dict.fromkeys(m.strip() for m in args.metrics.split(",") if m.strip()))
    try:
        settings = load_settings(config_file=args.config)
        overrides = {k: getattr(args, k) for k in ("db_path", "media_dir", "cache_dir") if getattr(args, k)}
        settings = settings.replace(**overrides) if overrides else settings
        unknown = sorted(set(metrics) - set(METRICS))
        if unknown:
            raise ValueError(f"unknown metric(s) {', '.join(unknown)}; choose from {', '.join(METRICS)}.")
        scorers = (tiny_scorers(settings.cache_dir, device=args.device, batch_size=args.batch_size) if args.tiny
                   else real_scorers(metrics, args))
        if all(metric in scorers.unavailable for metric in metrics):
            summary = {"skipped": {metric: scorers.unavailable[metric] for metric in metrics}}
        else:
            db = connect(settings.db_path, synchronous=settings.sqlite_synchronous)
            try:
                summary = compute_metrics(
                    db, MediaStore(settings.media_dir), args.suite, metrics, scorers,
                    models=[m.strip() for m in args.models.split(",")] if args.models else None,
                    fid_reference=args.fid_reference, fid_reference_folder=args.fid_reference_folder,
                    consistency_source=args.consistency_source, consistency_scorer=args.consistency_scorer,
                    progress=not args.quiet,
                )
            finally:
                db.close()
    except (SettingsError, ValueError, LookupError, OSError, ModuleNotFoundError, RuntimeError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    _print_summary(summary)
    skipped = summary.get("skipped", {})
    for metric, why in skipped.items():
        print(f"skipped {metric}: {' '.join(why.split())}", file=sys.stderr)  # one line each
    if len(skipped) == len(metrics):
        print(f"error: none of the requested metrics ({', '.join(metrics)}) could run; see the skipped lines above.",
              file=sys.stderr)
        return EXIT_NOTHING_RAN
    return EXIT_NOTHING_RAN if skipped and args.strict else 0


if __name__ == "__main__":
    sys.exit(main())
