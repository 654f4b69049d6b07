"""Ground-truth resources: Hugging Face dataset folders, found locally, in the data mirror or on the Hub.

A resource is Parquet + README card + model/ + provenance.json. See `benchmark.resources.store` for the
layout and `load_resource` for lookup."""

from benchmark.resources.store import (
    Resource,
    data_home,
    load_resource,
    resource_root,
    write_config,
)

__all__ = ["Resource", "data_home", "load_resource", "resource_root", "write_config"]
