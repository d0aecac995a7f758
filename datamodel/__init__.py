"""The ground floor: the arena's data and the rules that hold on writing it.

Settings, the database (connections, schema and migrations), the media folder, and one accessor module per table:
the catalog (models, prompts, images), annotators, battles, votes (with the quality rules that flag them), metrics,
judgments and their request cache, leaderboard snapshots, and the vote table as an analyst reads it (frames,
arrays, exports). Nothing here imports a package above it; :mod:`ratings` (pure maths) stands beside it.
"""
