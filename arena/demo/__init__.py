"""The demo: an arena that works out of the box, offline, with models whose order is known.

Everything the demo is made of, and where it lives:

- :mod:`arena.demo.seeding`: the demo's prompts (samples of the four suites), the check that a database holds the
  whole demo, and loading it from the shipped bundle into an empty database at first start
  (``ensure_demo``; ``python -m arena demo``), or making it with the generators (``build_demo``;
  ``python -m arena demo --regenerate``);
- ``arena/demo/bundle/``: the demo as data (the manifest and the images, losslessly compressed), which a web-only
  install (no torch) loads; shipped as package data;
- :mod:`arena.demo.making`: building the demo in a throwaway folder and writing that bundle
  (``python -m tools.demo_bundle``, the command that remakes it after a change to the demo's code);
- :mod:`arena.demo.metrics`: the leaderboard's metric columns on the demo, computed with tiny stand-in scorers;
- :mod:`arena.demo.clip`: the tiny CLIP those metrics use, trained offline on the demo painters' emoji.

Below, on the floors whose code they exercise (see docs/extending.md, "The demo"): the demo models
(:mod:`generators.demo`: their declarations and the run that makes their images), the procedural painters they draw
with (:mod:`generators.procedural`, :mod:`generators.layouts`, the emoji table ``suites/data/demo_glyphs.json``),
and each suite's demo sample (``demo_specs`` / ``sample_specs`` in :mod:`suites.taxonomy`, :mod:`suites.commonsense`,
:mod:`suites.semvarbench`, :mod:`suites.saneval`). ``python -m generators run``, its Ray Serve replicas and the open
prompts' live generation run the demo models in processes that import nothing of the arena, and the generators'
tests use them as their offline models, so the demo models belong to the generators floor; this package only
composes them.
"""
