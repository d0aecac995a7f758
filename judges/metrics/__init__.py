"""Model-based automatic metrics, computed once per image (or per model) and stored in the ``metrics`` table.

Modules (each imports its heavy dependencies only when used):

- :mod:`.store`: reading images with their prompts, writing metric rows, :func:`.store.model_metric_table`.
- :mod:`.clip_scores`: open_clip similarities: ``clip_score`` (image vs its prompt) for every suite and, for the
  taxonomy suite (T1), ``clip_lemma``, ``clip_hypernym``, ``clip_cohyponym``, ``clip_specificity``.
- :mod:`.commonsense_clip`: the Commonsense-T2I CLIP evaluator (T2): ``commonsense_clip_fit`` per image and
  ``commonsense_clip_accuracy`` per model.
- :mod:`.fid_is`: ``fid`` against a reference model's images and ``inception_score`` (torchmetrics).
- :mod:`.reward`: ``reward`` per image (ImageReward, an optional extra) and Mann-Whitney U comparisons, stored as
  ``reward_mann_whitney_p`` rows (one per pair of models, subset ``vs <other model>``).
- :mod:`.consistency`: spread of any per-image score within paraphrase groups (T5): ``consistency_*``.
- :mod:`.detection`: an open-vocabulary detector interface for SANEval (T4).
- :mod:`.cli`: ``python -m judges metrics`` (a metric whose extra or weights are missing is skipped, the others run);
  :mod:`.demo`: the offline demo's metrics with tiny random scorers; :mod:`.progress`: the progress bars.
"""
