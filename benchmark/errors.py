"""Exceptions. Every message says what was wrong and what to do; the CLI prints it on one line."""


class XaibenchError(Exception):
    """Base class: a user-facing problem with a one-line message naming the problem and the fix."""


class ResourceError(XaibenchError):
    """A resource is missing, truncated, or does not match what was asked for."""


class SubmissionError(XaibenchError):
    """A submission folder or its `submission.toml` is malformed, or it cannot be imported."""


class SubmissionImportError(SubmissionError):
    """A submission's code failed to import or its class to construct: the same on every model."""


class ParameterError(SubmissionError):
    """A `[parameters]` key (or `--param`) the entry class's constructor does not accept."""


class RegistryError(XaibenchError):
    """A name is unknown, or registered twice."""


class CacheError(XaibenchError):
    """A cache does not belong to the resource revision / submission it is used with."""


class ResultError(XaibenchError):
    """A result file does not follow the result schema."""


class InvalidOutput(XaibenchError):
    """One explainer output failed validation (recorded per instance; the run goes on)."""


class StorageError(XaibenchError):
    """A folder the harness writes (the data home, a results folder) is full or not writable."""


class NotRandomisable(XaibenchError):
    """The model under test has neither torch weights nor a randomisation of its own (the randomisation test
    cannot be run on it: `benchmark.models.variants.randomise`)."""
