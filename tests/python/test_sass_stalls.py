"""bench/sass_stalls.py: the stall summary of an Nsight Compute source-page export, on a
hand-made export (the tool runs where ncu does; its parsing and arithmetic are checked here)."""

import csv
import importlib.util
import pathlib

import pytest

TOOL = pathlib.Path(__file__).resolve().parents[2] / "bench" / "sass_stalls.py"
spec = importlib.util.spec_from_file_location("sass_stalls", TOOL)
sass_stalls = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sass_stalls)

HEADER = ["Address", "Source", "Warp Stall Sampling (All Samples)",
          "Warp Stall Sampling (Not-issued Samples)", "stall_long_sb", "stall_wait",
          "stall_long_sb (Not Issued)"]
ROWS = [
    ["0x7f0000001000", "  SYNCS.PHASECHK.TRANS64.TRYWAIT P1, [R88+URZ+0x30a50], R15", "2", "2",
     "0", "2", "0"],
    ["0x7f0000001010", "@!P1  BRA 0x7f0000002000", "60", "60", "60", "0", "60"],
    ["0x7f0000001020", "  QGMMA.64x128x32.F32.E4M3.E4M3 R24, gdesc[UR8], RZ, !UPT", "30", "5",
     "0", "30", "0"],
    ["0x7f0000001030", "  FFMA R1, R2, R3, R1", "8", "8", "4", "4", "4"],
]


def write_export(path, header=HEADER, rows=ROWS, kernel="block_scaled_gemm_kernel<128, 128>"):
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["Kernel Name", kernel])
        writer.writerow(header)
        writer.writerows(rows)


def test_reasons_and_top_instructions_with_the_barrier_above(tmp_path):
    write_export(tmp_path / "sass.csv")
    text = sass_stalls.summarise(tmp_path / "sass.csv", top=2, context=1)
    lines = text.splitlines()
    assert "warp samples: 100" in lines
    # 64 long-scoreboard and 36 wait samples of 100; the "(Not Issued)" columns are not counted.
    assert any(line.split() == ["long_sb", "64.0%"] for line in lines)
    assert any(line.split() == ["wait", "36.0%"] for line in lines)
    first = lines.index(next(line for line in lines if line.startswith("> 01010")))
    assert "60.0%" in lines[first]
    assert "TRYWAIT" in lines[first - 1] and "0x30a50" in lines[first - 1]
    assert any(line.startswith("> 01020") and "30.0%" in line for line in lines)
    assert not any(line.startswith("> 01030") for line in lines)  # top 2 only


def test_files_that_are_not_source_exports_are_named(tmp_path):
    (tmp_path / "log.txt").write_text("==PROF== Connected\n")
    with pytest.raises(ValueError, match="not an ncu source-page CSV"):
        sass_stalls.summarise(tmp_path / "log.txt")
    write_export(tmp_path / "no-samples.csv", header=["Address", "Source"],
                 rows=[["0x1", "NOP"]])
    with pytest.raises(ValueError, match="SourceCounters"):
        sass_stalls.summarise(tmp_path / "no-samples.csv")
    assert sass_stalls.main([str(tmp_path / "missing.csv")]) == 2
