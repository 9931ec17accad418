"""Studies: measurements on a paper's protocol, each a short spec on the reproduction harness."""
