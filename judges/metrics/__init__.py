"""Model-based automatic metrics, computed once per image (or per model) and stored in the ``metrics`` table.

Each metric is one declaration (:class:`.registry.Metric`) in its module, registered in :data:`.registry.METRICS`
(whose built-ins list the modules below that declare one); the command line, the scorer building and
:func:`.commands.compute_metrics` ask the registry. Modules (each imports its heavy dependencies only when used):

- :mod:`.registry`: the metric declarations, the scorers built from them, the directions of the stored metrics.
- :mod:`.clip_scores`: ``clip``: open_clip similarities: ``clip_score`` (image vs its prompt) for every suite and,
  for the taxonomy suite (T1), ``clip_lemma``, ``clip_hypernym``, ``clip_cohyponym``, ``clip_specificity``.
- :mod:`.commonsense_clip`: ``commonsense``: the Commonsense-T2I CLIP evaluator (T2): ``commonsense_clip_fit`` per
  image and ``commonsense_clip_accuracy`` per model.
- :mod:`.fid_is`: ``fid`` against a reference model's images and ``is`` (``inception_score``) with torchmetrics.
- :mod:`.reward`: ``reward`` per image (ImageReward, an optional extra) and Mann-Whitney U comparisons, stored as
  ``reward_mann_whitney_p`` rows (one per pair of models, subset ``vs <other model>``).
- :mod:`.consistency`: ``consistency``: spread of any per-image score within paraphrase groups (T5).
- :mod:`.detection`: an open-vocabulary detector interface for SANEval (T4).
- :mod:`.commands`: ``python -m judges metrics`` (a metric whose extra or weights are missing is skipped, the others
  run); :mod:`.progress`: the progress bars.

Rows are written with :func:`datamodel.metrics.write_metrics`; images are read with
:func:`judges.selection.image_rows`.
"""
