#!/usr/bin/env python3
"""bench/sweep.py --table FILES --docs PAGE: the page's generated part is rewritten from
the results, everything around it stays as written, and a page without the markers
is an error that names them."""
import json
import pathlib
import subprocess
import sys
import tempfile
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
import sweep  # noqa: E402

PAGE = f"""# Sweep

Findings, by hand.

{sweep.TABLE_BEGIN}
stale table
{sweep.TABLE_END}

More findings.
"""


def record(case, system, ms, **extra):
    return json.dumps({"date": "2026-12-06", "device": "Test GPU", "workload": "sweep",
                       "case": case, "system": system, "variant": "v", "median_ms": ms,
                       **extra})


class SweepDocs(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.tmp = pathlib.Path(self.dir.name)
        self.page = self.tmp / "sweep.md"
        self.page.write_text(PAGE)
        # Two cases in the reverse of the sweep's order; two peers, the faster counts.
        self.results = self.tmp / "run.jsonl"
        self.results.write_text("\n".join([
            "not json: a log line",
            record("sum_f32_1048576x4_ax0", "graphc", 0.012, rel_err=1e-8),
            record("sum_f32_1048576x4_ax0", "pytorch", 0.024, rel_err=2e-8),
            record("sum_f32_16777216_all", "graphc", 0.05, rel_err=1e-8),
            record("sum_f32_16777216_all", "pytorch", 0.04, rel_err=2e-8),
            record("sum_f32_16777216_all", "jax", 0.09, rel_err=3e-8),
            record("sum_f32_16777216_all", "floor", 0.032),
            json.dumps({"workload": "W1", "case": "enkf", "system": "graphc", "median_ms": 1}),
        ]) + "\n")

    def tearDown(self):
        self.dir.cleanup()

    def docs(self, *extra):
        return subprocess.run([sys.executable, str(ROOT / "bench" / "sweep.py"), "--table",
                               str(self.results), "--docs", str(self.page), *extra],
                              capture_output=True, text=True)

    def test_rewrites_only_the_generated_part(self):
        self.assertEqual(self.docs().returncode, 0)
        text = self.page.read_text()
        self.assertTrue(text.startswith("# Sweep\n\nFindings, by hand.\n\n" + sweep.TABLE_BEGIN))
        self.assertTrue(text.endswith(sweep.TABLE_END + "\n\nMore findings.\n"))
        self.assertNotIn("stale table", text)
        self.assertNotIn("enkf", text)
        self.assertIn("2026-12-06, Test GPU", text)
        rows = [line for line in text.splitlines() if line.startswith("| sum_")]
        # The sweep's order; 0.05 over the faster peer's 0.04 is 1.25x, over 1.1: bold.
        self.assertEqual(rows, [
            "| sum_f32_16777216_all | 0.05 | 1e-08 | pytorch v | 0.04 | 2e-08 | **1.25** | 0.032 |",
            "| sum_f32_1048576x4_ax0 | 0.012 | 1e-08 | pytorch v | 0.024 | 2e-08 | 0.50 | - |"])
        image = self.page.with_suffix(".png")
        try:
            import matplotlib  # noqa: F401
            self.assertEqual(image.read_bytes()[:4], b"\x89PNG")
            self.assertIn("](sweep.png)", text)
        except ImportError:
            self.assertFalse(image.exists())
            self.assertNotIn("](sweep.png)", text)
        # A second run gives the same page: nothing accumulates.
        self.assertEqual(self.docs().returncode, 0)
        self.assertEqual(self.page.read_text(), text)

    def test_a_page_without_markers_is_an_error(self):
        self.page.write_text("# Sweep\n\nno generated part\n")
        run = self.docs()
        self.assertNotEqual(run.returncode, 0)
        self.assertIn(str(self.page), run.stderr)
        self.assertIn(sweep.TABLE_BEGIN, run.stderr)
        self.assertEqual(self.page.read_text(), "# Sweep\n\nno generated part\n")

    def test_docs_is_for_the_gpu_sweep(self):
        run = self.docs("--cpu")
        self.assertNotEqual(run.returncode, 0)
        self.assertIn("--docs", run.stderr)
        self.assertEqual(self.page.read_text(), PAGE)


if __name__ == "__main__":
    unittest.main()
