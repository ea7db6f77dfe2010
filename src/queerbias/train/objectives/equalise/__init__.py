"""`equalise`: language modelling plus a loss that makes the benchmark's score indifferent to identity."""
