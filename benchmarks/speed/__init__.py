"""Speed benchmarks: each prints one JSON object as its last stdout line."""
