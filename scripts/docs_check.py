#!/usr/bin/env python3
"""What DocC does not check by itself (scripts/docs runs this before it):
- every public symbol of the modules named has a doc comment (also the members a module
  adds to another module's types, in MODULE@OTHER.symbols.json), unless it implements a
  protocol requirement, whose documentation DocC shows in its place;
- every top-level public symbol of a module with a catalog (Sources/M/M.docc/M.md) is
  listed, as ``Symbol``, in that landing page's topics.
usage: docs_check.py SYMBOL_GRAPH_DIRECTORY MODULE...
"""
import glob
import json
import os
import re
import sys


def problems(graphs, module):
    found = []
    top_level = set()
    paths = [os.path.join(graphs, module + ".symbols.json")] + sorted(glob.glob(os.path.join(graphs, module + "@*.symbols.json")))
    for path in paths:
        with open(path) as file:
            graph = json.load(file)
        inherited = {r["source"] for r in graph["relationships"] if "sourceOrigin" in r}
        for symbol in graph["symbols"]:
            if "docComment" not in symbol and symbol["identifier"]["precise"] not in inherited:
                found.append(f"{module}: {'.'.join(symbol['pathComponents'])} has no doc comment")
            if path == paths[0] and len(symbol["pathComponents"]) == 1:
                top_level.add(symbol["pathComponents"][0])
    landing = os.path.join("Sources", module, module + ".docc", module + ".md")
    if os.path.exists(landing):
        with open(landing) as file:
            text = file.read()
        if "\n## Topics\n" not in text:
            return found + [f"{module}: {landing} has no ## Topics section"]
        listed = set(re.findall(r"``([A-Za-z0-9_]+)``", text.split("\n## Topics\n", 1)[1]))
        for name in sorted(top_level - listed):
            found.append(f"{module}: {name} is not in the topics of {landing}")
    return found


def main():
    graphs, modules = sys.argv[1], sys.argv[2:]
    found = [problem for module in modules for problem in problems(graphs, module)]
    for problem in found:
        print(problem, file=sys.stderr)
    if found:
        sys.exit(f"docs_check: {len(found)} problems")


main()
