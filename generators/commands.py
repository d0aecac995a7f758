"""``python -m generators``: run models on a suite's prompts, smoke-test every model on tiny stand-ins, build the tiny
offline pipelines, list the registry.

Each command parses its arguments, calls one library function and prints. Under ``accelerate launch`` the ``run``
command shards its work across the launched processes (one per GPU)::

    accelerate launch --num_processes 4 -m generators run --models sdxl,sd3 --suite taxonomy
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from functools import partial

from core.presets import Preset, add_preset_argument, apply_defaults, check_suite, get_preset, given_options
from core.settings import SettingsError, load_settings


def _settings(args):
    settings = load_settings(config_file=args.config)
    overrides = {name: getattr(args, name) for name in ("db_path", "media_dir", "cache_dir")
                 if getattr(args, name, None)}
    return settings.replace(**overrides) if overrides else settings


def _names(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


def process_state(device: str | None):
    """accelerate's view of this process: (process index, process count, device).

    Launched with ``accelerate launch --multi_gpu`` (or ``torchrun``), each process joins the process group: NCCL on
    GPUs, gloo on a machine without CUDA (or with ``--device cpu``), which is how the CPU test runs two processes.
    """
    import os

    import torch
    from accelerate import PartialState

    cpu = device == "cpu" or (device is None and not torch.cuda.is_available())
    state = PartialState(cpu=cpu)
    launched = int(os.environ.get("WORLD_SIZE", "1"))
    if launched > 1 and state.num_processes != launched:
        raise RuntimeError(
            f"{launched} processes were launched but accelerate sees {state.num_processes}; every process would make "
            "every image. Launch with `accelerate launch --multi_gpu --num_processes N -m generators run ...`."
        )
    return state.process_index, state.num_processes, device or str(state.device)


def _memory_options(args) -> dict:
    """The GPU memory flags given on the command line, as ModelSpec fields (flags not given change nothing)."""
    options = {"offload": args.offload, "vae_tiling": args.vae_tiling or None, "vae_slicing": args.vae_slicing or None,
               "compile": args.compile or None}
    return {name: value for name, value in options.items() if value is not None}


def cmd_run(args) -> int:

    from datamodel.connection import connect
    from datamodel.media import MediaStore
    from datamodel.renditions import Renditions
    from generators.api_images import ImageAPIConfig, check_keys
    from generators.demo import demo_models
    from generators.pipelines import check_weights, make_generator
    from generators.registry import RegistryError, apply_preset, cascade, load_registry, select
    from generators.runner import run, suite_prompt_ids
    from generators.tiny import ensure_tiny

    settings = _settings(args)
    preset = args.preset
    registry = apply_preset(load_registry(args.models_file, extra=demo_models()), preset)
    for entry in args.weights or []:
        name, sep, folder = entry.partition("=")
        if not sep or name not in registry:
            raise RegistryError(f"--weights {entry!r}: write NAME=FOLDER with a known model name (see `list`).")
        registry[name] = dataclasses.replace(registry[name], weights=folder)
    if options := _memory_options(args):
        registry = {name: dataclasses.replace(spec, **options) if spec.kind == "diffusers" else spec
                    for name, spec in registry.items()}
    specs = select(registry, _names(args.models))
    check_weights(specs, registry)  # with HF_HUB_OFFLINE set: every missing model named before anything runs
    api_config = ImageAPIConfig.from_settings(settings)
    check_keys(specs, api_config)  # an API model without OPENAI_API_KEY: said before anything is written
    for spec in specs:  # before the process group exists: transformers saves weights on rank 0 only
        for stage in cascade(registry, spec) if spec.kind == "diffusers" else []:
            if stage.tiny and not stage.weights:
                ensure_tiny(settings.cache_dir, stage.tiny)
    process_index, num_processes, device = process_state(args.device)
    db = connect(settings.database, synchronous=settings.sqlite_synchronous)
    media = MediaStore.from_settings(settings)
    try:
        prompt_ids = suite_prompt_ids(db, args.suite, args.subset, args.variant, args.limit)
        report = run(
            db, media, specs, prompt_ids,
            partial(make_generator, registry=registry, cache_dir=settings.cache_dir, device=device,
                    dtype=args.dtype, negative_prompt=args.negative_prompt, db=db, media=media,
                    api_config=api_config),
            images_per_prompt=args.images_per_prompt, seed=settings.seed if args.seed is None else args.seed,
            seed_policy=args.seed_policy, batch_size=args.batch_size, process_index=process_index,
            num_processes=num_processes, progress=not args.quiet, preset=preset.name,
            renditions=Renditions.from_settings(media, settings),
        )
    finally:
        db.close()
    where = f"process {process_index + 1}/{num_processes}: " if num_processes > 1 else ""
    for note in report.notes:
        print(f"{where}{note}")
    print(f"{where}{report.made} images made, {report.existing} already there, "
          f"{report.owned} of {report.planned} planned items owned by this process ({device}); "
          f"preset {preset.label()}.")
    if report.failed:
        print(f"error: {len(report.failed)} image(s) could not be made ({'; '.join(report.failed[:5])}"
              f"{'; ...' if len(report.failed) > 5 else ''}); the lines above say why. Run the same command again "
              "to retry them.", file=sys.stderr)
        return 1
    return 0


def cmd_tiny(args) -> int:
    from generators.tiny import TINY_RECIPES, ensure_tiny

    settings = _settings(args)
    for name in _names(args.names) if args.names else list(TINY_RECIPES):
        path = ensure_tiny(settings.cache_dir, name, seed=args.seed, rebuild=args.rebuild)
        print(f"{name}: {path}  ({TINY_RECIPES[name].pipeline_class}: {TINY_RECIPES[name].description})")
    return 0


def cmd_smoke(args) -> int:
    import time

    from generators.demo import demo_models
    from generators.registry import load_registry, select
    from generators.smoke import smoke

    settings = _settings(args)
    registry = load_registry(args.models_file, extra=demo_models())
    names = [spec.name for spec in select(registry, _names(args.models))] if args.models else None
    started, failed, count = time.perf_counter(), [], 0
    for result in smoke(registry, names, cache_dir=settings.cache_dir, device=args.device):
        print(result.line(), flush=True)
        if result.skipped:
            continue
        count += 1
        failed += [] if result.ok else [result.name]
    stages = sorted(name for name, spec in registry.items() if spec.takes_image)
    print(f"{count - len(failed)} of {count} models made their image in {time.perf_counter() - started:.1f} s "
          f"(tiny stand-ins in {settings.cache_dir}/tiny" + (f"; stages run inside their cascades: "
                                                               f"{', '.join(stages)}" if stages else "") + ").")
    if failed:
        print(f"error: smoke failed for {', '.join(failed)}; the FAIL lines above say where.", file=sys.stderr)
    return 1 if failed else 0


def cmd_list(args) -> int:
    from generators.demo import demo_models
    from generators.registry import load_registry, output_resolution

    registry = load_registry(args.models_file, extra=demo_models())
    for spec in registry.values():
        width, height = spec.resolution
        where = (spec.weights or (f"tiny:{spec.tiny}" if spec.tiny else spec.hub_id)
                 or (f"api:{spec.api_model}" if spec.api_model else "-"))
        size = f"{width}x{height}"
        if spec.stages:
            size += "->" + "x".join(map(str, output_resolution(registry, spec)))
        role = (f"  stages: {', '.join(spec.stages)}" if spec.stages
                else "  (a cascade stage)" if spec.takes_image else "")
        print(f"{spec.name:24} {spec.pipeline_class:30} {spec.steps:>3} steps  guidance {spec.guidance!s:5} "
              f"{size:9} {spec.dtype:8} {where}{role}")
    return 0


def cmd_ray_deploy(args) -> int:
    from generators.demo import demo_models
    from generators.live import SafetyConfig
    from generators.ray_serving import deploy
    from generators.registry import load_registry, select

    settings = _settings(args)
    address = args.address or settings.ray_address
    if not address:
        raise ValueError("no Ray cluster: pass --address host:6379 (or ray://host:10001), or set ARENA_RAY_ADDRESS.")
    registry = load_registry(args.models_file or settings.models_file or None, extra=demo_models())
    names = [name.strip() for name in (args.models or settings.open_prompt_models).split(",") if name.strip()]
    if len(names) < 2:
        raise ValueError("name two or more models: --models a,b (or ARENA_OPEN_PROMPT_MODELS).")
    specs = {spec.name: spec for spec in select(registry, names)}
    started = time.perf_counter()
    apps = deploy(specs, address, registry=registry, cache_dir=settings.cache_dir,
                  safety=SafetyConfig.from_settings(settings))
    print(f"{len(apps)} Ray Serve applications running on {address} after {time.perf_counter() - started:.1f} s: "
          f"{', '.join(apps)}. Start the app with ARENA_RAY_ADDRESS={address} and ARENA_OPEN_PROMPT_MODELS="
          f"{','.join(names)}.")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m generators", description="Text-to-image generation for the arena.")
    parser.add_argument("--config", help="TOML settings file (default: $ARENA_CONFIG or ./arena.toml)")
    parser.add_argument("--db", dest="db_path", help="database file (default: the db_path setting)")
    parser.add_argument("--media-dir", help="media folder (default: the media_dir setting)")
    parser.add_argument("--cache-dir", help="cache folder for tiny pipelines (default: the cache_dir setting)")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = commands.add_parser("run", help="generate the missing images of models for a suite's prompts")
    run.add_argument("--models", help="comma-separated registry names (see `list`; default: the preset's models)")
    run.add_argument("--suite", required=True, help="suite whose prompts to generate for")
    run.add_argument("--subset", help="only this subset")
    run.add_argument("--variant", help="only this variant (e.g. with_definition)")
    run.add_argument("--images-per-prompt", type=int, default=1, help="images per (model, prompt) (default 1)")
    run.add_argument("--batch-size", type=int, default=4, help="prompts per pipeline call (default 4)")
    run.add_argument("--seed", type=int, help="base seed (default: the seed setting)")
    run.add_argument("--seed-policy", choices=["derived", "fixed"], default="derived",
                     help="derived: a hash of (seed, model, prompt, index); fixed: seed + index everywhere")
    run.add_argument("--limit", type=int, help="only the first N prompts (by id)")
    run.add_argument("--models-file", help="TOML/JSON file adding models or overriding fields (e.g. weights)")
    run.add_argument("--weights", action="append", metavar="NAME=FOLDER",
                     help="load NAME from a local weights folder (repeatable; overrides the models file)")
    run.add_argument("--device", help="torch device (default: the accelerate process's device; cpu without a GPU)")
    run.add_argument("--dtype", choices=["float32", "float16", "bfloat16"],
                     help="default: the registry's dtype on CUDA, float32 elsewhere")
    run.add_argument("--negative-prompt", default="", help="negative prompt for models that accept one")
    run.add_argument("--offload", choices=["model", "sequential"],
                     help="fit big models on one GPU: model = diffusers' model CPU offload (whole components move "
                     "to the GPU when used), sequential = layer by layer (least memory, slowest)")
    run.add_argument("--vae-tiling", action="store_true", help="decode latents in tiles (large images, less memory)")
    run.add_argument("--vae-slicing", action="store_true", help="decode a batch one image at a time")
    run.add_argument("--compile", action="store_true",
                     help="torch.compile the UNet/transformer (slow first batch, faster later ones)")
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    add_preset_argument(run, what="(its models, their settings, seeds and batch size)")
    run.set_defaults(handler=cmd_run)

    about = "run every registry model end to end on a tiny random-weight stand-in (no real weights)"
    smoke = commands.add_parser("smoke", help=about, description=about)
    smoke.add_argument("--models", help="comma-separated registry names (default: all but cascade stages)")
    smoke.add_argument("--models-file", help="TOML/JSON file adding models or overriding fields")
    smoke.add_argument("--device", default="cpu", help="torch device (default cpu)")
    smoke.set_defaults(handler=cmd_smoke)

    tiny = commands.add_parser("tiny", help="build the tiny offline pipelines into <cache_dir>/tiny")
    tiny.add_argument("--names", help="comma-separated recipes (default: all)")
    tiny.add_argument("--seed", type=int, default=0)
    tiny.add_argument("--rebuild", action="store_true", help="delete and rebuild existing ones")
    tiny.set_defaults(handler=cmd_tiny)

    about = ("deploy the models that answer open prompts on a Ray cluster as Ray Serve deployments (one per model; "
             "GPUs, replicas and autoscaling from the registry's serve_* fields)")
    ray_deploy = commands.add_parser("ray-deploy", help=about, description=about)
    ray_deploy.add_argument("--address", help="the Ray cluster (default: ARENA_RAY_ADDRESS)")
    ray_deploy.add_argument("--models", help="comma-separated registry names (default: ARENA_OPEN_PROMPT_MODELS)")
    ray_deploy.add_argument("--models-file", help="TOML/JSON file adding models or overriding fields (default: "
                            "ARENA_MODELS_FILE)")
    ray_deploy.set_defaults(handler=cmd_ray_deploy)

    listing = commands.add_parser("list", help="list the registry's models and their settings")
    listing.add_argument("--models-file", help="TOML/JSON file adding models or overriding fields")
    listing.set_defaults(handler=cmd_list)
    return parser


def preset_values(preset: Preset) -> dict:
    """The ``run`` options a preset sets (its models, seed, seed policy, batch size and images per prompt)."""
    values = {"models": ",".join(preset.get("generation.models", ())) or None, "seed": preset.get("generation.seed"),
              "seed_policy": preset.get("generation.seed_policy"), "batch_size": preset.get("generation.batch_size"),
              "images_per_prompt": preset.get("generation.images_per_prompt")}
    return {dest: value for dest, value in values.items() if value is not None}


def apply_run_preset(parser: argparse.ArgumentParser, args: argparse.Namespace, argv: list[str]) -> None:
    """Resolve ``args.preset`` to its declaration, check it fits the suite, and give every ``run`` option the user
    did not type the preset's value."""
    args.preset = get_preset(args.preset)
    check_suite(args.preset, args.suite)
    apply_defaults(args, preset_values(args.preset), given_options(parser, argv))
    if not args.models:
        raise ValueError(f"--models is required: preset {args.preset.name} names no models. Pass "
                         "--models a,b (see `list`), or a preset with models (python -m arena presets).")


def main(argv: list[str] | None = None) -> int:
    from core.extras import exit_status, require

    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command in ("run", "smoke", "tiny"):  # the torch stack (smoke would fail model by model without it)
            require("torch", "diffusers", "transformers", command=f"python -m generators {args.command}")
        if args.command == "ray-deploy":
            require("ray", command="python -m generators ray-deploy")
        from generators.pipelines import OutOfMemory

        try:
            if args.command == "run":
                apply_run_preset(parser, args, argv)
            return args.handler(args)
        except (SettingsError, ValueError, LookupError, FileNotFoundError, OutOfMemory) as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
    except ImportError as error:
        return exit_status(error, f"python -m generators {args.command}")
