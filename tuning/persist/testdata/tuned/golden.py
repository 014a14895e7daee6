#!/usr/bin/env python3
# Writes NAME.json beside each NAME.conf: the sections and options that
# tuned's own parser reads (tuned 2.20, profiles/loader.py: configparser with
# delimiters "=", inline comment prefix "#", strict=False, optionxform=str).
# The Go reader must match them: TestParseTunedConfMatchesTuned.
# Run: python3 golden.py (from this directory).
import configparser, glob, json

for path in sorted(glob.glob("*.conf")):
    cp = configparser.ConfigParser(delimiters=("="), inline_comment_prefixes=("#"), strict=False, interpolation=None)
    cp.optionxform = str
    with open(path) as f:
        cp.read_file(f, path)
    out = [[s, [[k, cp.get(s, k, raw=True)] for k in cp.options(s)]] for s in cp.sections()]
    with open(path[:-len(".conf")] + ".json", "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
