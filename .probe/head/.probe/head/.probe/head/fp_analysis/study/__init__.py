"""Studies of our own kernel variants on the seed ops: ``fpa report`` (``report``), ``fpa tolerance`` (``tolerance``,
``tolerance_report``), ``fpa orders`` (``order_table``), ``fpa bench`` (``bench``) and the sweeps behind the notebooks
(``sweeps``). Imports numerics, ops and fpa_kernels.
"""
