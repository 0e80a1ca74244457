"""Agreement between human annotators, and between a judge and the humans, with bootstrap intervals.

Every measure depends on the data only through, per *unit* (one item on one criterion), the vector
of human counts per score category and, for a judge, its category. Units with the same counts are
compressed into *patterns* with a weight, so a measure costs O(patterns), not O(ratings); the
bootstrap resamples items as multinomial draws of item-type counts, at a cost independent of the
number of ratings. The modules, in the order the table is computed:

- :mod:`.units`: :func:`~.units.count_units`, one pass over the ratings to the per-unit counts, and
  the :class:`~.units.Units` it returns (also built by :mod:`evalcore.engines.agreement` from an engine's
  GROUP BYs, for data larger than memory). The string columns are hashed by
  :mod:`evalcore.data.hashing`.
- :mod:`.groups`: each unit's group for a ``by`` grouping (:func:`~.groups.group_codes`), and the
  default grouping.
- :mod:`.filter`: the unit filter (:func:`~.filter.filter_units`), agreement over the fully annotated
  units only.
- :mod:`.resampling`: the units one kind of measure uses, compressed into patterns, with their
  weights in the data and in each item-bootstrap resample.
- :mod:`.measures`: the measures on the patterns' counts (numpy only), and their names
  (:data:`~.measures.HUMAN_MEASURES`, :data:`~.measures.JUDGE_MEASURES`).
- :mod:`.table`: :func:`~.table.agreement`, the table: intervals, notes, the flag test; nominal criteria
  (:mod:`evalcore.data.scales`) computed apart from the numbers (:func:`~.table.scale_parts`), without the
  measures that need an order (:data:`~.measures.ORDER_MEASURES`).
- :mod:`.passes`: numba's compiled passes (:mod:`._kernel`) or numpy's, by table size, and the one
  process-wide setting that chooses (:func:`~.passes.one_shot`).

Each name is imported from the module that defines it; this file only describes them.
"""
