"""The weekly procurement report: where to rent this week, and what changed.

Every number comes from a named view or table macro of the warehouse (warehouse/sql/marts/);
this package only arranges them: `build` (the Report from the views), `workloads` (the sizing
engine's ranking of the week's offers), `charts` (inline SVG), `render` (HTML, Markdown, CSV).
"""
