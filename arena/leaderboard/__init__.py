"""The leaderboard, in one package: what is computed, how it reads, and how it is served.

- :mod:`~arena.leaderboard.compute`: the votes of a slice read once, every fit of the board
  (:func:`~arena.leaderboard.compute.compute_leaderboard`) and its options;
- :mod:`~arena.leaderboard.fits`: the human + judge (PPI) fit and the robustness audit;
- :mod:`~arena.leaderboard.labels`: the words and headers people read, ratings rounded to their interval, the ranks
  shown;
- :mod:`~arena.leaderboard.text`: the summary and the board as the command line prints it;
- :mod:`~arena.leaderboard.view`: the board as every viewer sees it (tables, JSON and, for the page, figures);
- :mod:`~arena.leaderboard.plots`: the plotly figures (imported only where a figure is drawn);
- :mod:`~arena.leaderboard.service`: snapshots computed in a worker process, off the vote path.

The maths underneath lives in :mod:`ratings`, which draws nothing.
"""
