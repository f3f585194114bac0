#!/usr/bin/env python3
"""bench/crossover.py end to end on the CPU backend: one JSON line per case and
variant, in the results' format, with the time graphc measured; a graph graphc
rejects is an error that carries graphc's message.

Usage: crossover_test.py GRAPHC (the built graphc binary)."""
import json
import pathlib
import subprocess
import sys
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "crossover.py"
GRAPHC = ""


def crossover(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *args, "--graphc", GRAPHC,
                           "--backend", "cpu", "--repeat", "2"],
                          capture_output=True, text=True)


class CrossoverTest(unittest.TestCase):
    def test_a_line_per_case_and_variant(self):
        done = crossover("trsm", "--sizes", "8", "40", "--rhs", "3", "--variants", "",
                         "panelSolveMaxN=288")
        self.assertEqual(done.returncode, 0, done.stderr)
        lines = [json.loads(line) for line in done.stdout.splitlines()]
        self.assertEqual(len(lines), 8)  # 2 orders x 1 count x 2 sides x 2 variants
        self.assertEqual({x["case"] for x in lines},
                         {f"trsm_f64_{side}_n{n}_rhs3" for side in ("left", "right")
                          for n in (8, 40)})
        self.assertEqual({x["variant"] for x in lines}, {"defaults", "panelSolveMaxN=288"})
        for x in lines:
            self.assertEqual((x["workload"], x["system"], x["device"]),
                             ("crossover", "graphc", "cpu"))
            self.assertGreater(x["median_ms"], 0)
            self.assertIn("--repeat=2", x["command"])

    def test_a_graph_graphc_rejects_is_an_error_with_its_message(self):
        done = crossover("trsm", "--sizes", "8", "--rhs", "3", "--dtype", "i32")
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("graphc failed", done.stderr)
        self.assertIn("triangular_solve", done.stderr)

if __name__ == "__main__":
    GRAPHC = sys.argv.pop(1)
    unittest.main()
