#!/usr/bin/env python3
"""Parses Prometheus's text exposition format from standard input with prometheus_client's
own parser (an independent implementation) and prints its samples as JSON:
{"NAME{label=value,...}": value}, labels sorted by name."""
import json
import sys

from prometheus_client.parser import text_string_to_metric_families

samples = {}
for family in text_string_to_metric_families(sys.stdin.read()):
    for sample in family.samples:
        labels = ",".join(f"{name}={value}" for name, value in sorted(sample.labels.items()))
        samples[f"{sample.name}{{{labels}}}"] = sample.value
print(json.dumps(samples))
