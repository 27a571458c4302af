"""iocpbench analysis: charts, HTML report and cross-machine comparison of results files.

Modules: load (read + validate), stats, metrics, match (spec keys), grid (families of points),
compare, charts, report, cli (the console scripts).
"""

__version__ = "0.1.0"
