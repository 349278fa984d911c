#!/usr/bin/env python3
"""What DocC does not check by itself (scripts/docs runs this before it):
- every public symbol of the modules named has a doc comment, unless it implements a
  protocol requirement and takes that requirement's documentation;
- every top-level public symbol of a module with a catalog (Sources/M/M.docc/M.md) is
  listed, as ``Symbol``, in that landing page's topics.
usage: docs_check.py SYMBOL_GRAPH_DIRECTORY MODULE...
"""
import json
import os
import re
import sys


def problems(graphs, module):
    with open(os.path.join(graphs, module + ".symbols.json")) as file:
        graph = json.load(file)
    inherited = {r["source"] for r in graph["relationships"] if "sourceOrigin" in r}
    found = []
    for symbol in graph["symbols"]:
        if "docComment" not in symbol and symbol["identifier"]["precise"] not in inherited:
            found.append(f"{module}: {'.'.join(symbol['pathComponents'])} has no doc comment")
    landing = os.path.join("Sources", module, module + ".docc", module + ".md")
    if os.path.exists(landing):
        with open(landing) as file:
            topics = file.read().split("## Topics", 1)[-1]
        listed = set(re.findall(r"``([A-Za-z0-9_]+)``", topics))
        for name in sorted({s["pathComponents"][0] for s in graph["symbols"] if len(s["pathComponents"]) == 1}):
            if name not in listed:
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
