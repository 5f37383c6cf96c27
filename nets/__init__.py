"""The network half: features, model, data, training, evaluation server."""
import engine  # noqa: F401  (sets numba's cache folder before numba is imported)
