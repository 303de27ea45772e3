"""Trains the byte-level GPT on the Python standard library with bf16 or FP8 linear layers.

The question it answers (the seed's): does FP8 training with fast accumulation in the forward
GEMM and promoted accumulation in the two gradient GEMMs reach the same validation loss as
bf16? Run it once per --linear/--recipe and compare the logs with plot.py.

    python examples/train/train.py --config tiny --device cpu          # CI smoke run
    python examples/train/train.py --config h200-300m --compile --linear fp8dot --recipe seed \
        --log runs/fp8dot-seed.jsonl
    torchrun --standalone --nproc-per-node 2 examples/train/train.py ... --fsdp   # 2 GPUs

Precision: bf16 autocast over fp32 master weights (the weights, gradients and AdamW state are
fp32; each GEMM's inputs are cast to bf16, or quantised to FP8 by the FP8 layers). That is how
Transformer Engine and torchao float8 users train, and what their layers expect: the FP8
layers quantise from the high-precision weight every step, and AdamW's small updates are not
rounded away in a bf16 weight. --dtype fp32 turns autocast off (a debugging aid).

Determinism: the same seed gives bit-identical losses on the CPU (tests/python checks it). On
CUDA it does not promise that: flash attention's backward and cuBLAS's split-K reductions may
add in a different order from run to run, which is why the comparison asks for bf16's own
seed-to-seed spread.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

from configs import HYPERPARAMETERS, add_config_flags, fill_from_config
from corpus import VOCAB_SIZE, evaluation_batches, load_corpus, random_batch
from data_parallel import DataParallel, end_rank_process, full_value
from gpt import GPT, MLP, GPTConfig, parameter_counts
from linears import FP8DOT_RECIPES, LINEARS, TORCHAO_RECIPES, swap_block_linears
from optim import lr_at, make_adamw, set_lr
from runlog import TIMING_WARMUP_STEPS, RunLog

PROFILED_STEPS = range(TIMING_WARMUP_STEPS + 1, TIMING_WARMUP_STEPS + 6)  # --profile


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_config_flags(parser)
    parser.add_argument("--linear", choices=LINEARS, default="bf16",
                        help="the blocks' projection layers (embeddings and LM head stay bf16)")
    parser.add_argument("--recipe", choices=sorted(set(FP8DOT_RECIPES) | set(TORCHAO_RECIPES)),
                        default="seed",
                        help="with --linear fp8dot: its recipe; with --linear torchao: seed (its "
                             "default config) or fast (fast accumulation in all three GEMMs)")
    parser.add_argument("--fused-swiglu", action="store_true",
                        help="with --linear fp8dot and the SwiGLU MLP: quantise SiLU(gate)·up "
                             "inside the down projection's FP8 cast (fp8dot.torch.Linear.swiglu) "
                             "instead of writing it in bf16 and quantising that")
    parser.add_argument("--autotune", type=int, default=0, metavar="N",
                        help="with --linear fp8dot: fp8dot.set_autotune(N), each GEMM's GPU plan "
                             "races cuBLASLt's first N algorithms and fp8dot's own kernel when "
                             "it is made (0: the plans' own choice)")
    parser.add_argument("--recompute-weight-transpose", action="store_true",
                        help="with --linear fp8dot: each layer casts its weight's FP8 transpose "
                             "again in the backward instead of keeping it from the forward (one "
                             "byte per parameter less memory, one more pass over the weights; "
                             "fp8dot.torch.Linear)")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--dtype", choices=("bf16", "fp32"), default="bf16",
                        help="bf16: autocast over fp32 master weights; fp32: no autocast")
    parser.add_argument("--compile", action="store_true", help="torch.compile the model")
    parser.add_argument("--compile-mode", default="default",
                        choices=("default", "reduce-overhead", "max-autotune-no-cudagraphs"),
                        help="torch.compile's mode (reduce-overhead: the forward and backward "
                             "graphs replay as CUDA graphs, without per-kernel launches)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-stdlib-tests", action="store_true",
                        help="leave the standard library's test suite out of the corpus")
    parser.add_argument("--log", type=Path, help="write one JSON line per step and evaluation")
    parser.add_argument("--profile", type=Path,
                        help="profile 5 steps after the timing warm-up; write the op table here")
    parser.add_argument("--fsdp", action="store_true",
                        help="under torchrun: data parallel over its processes with FSDP2, the "
                             "global --batch-size split over them (data_parallel.py)")
    parser.add_argument("--no-amax-reduction", action="store_true",
                        help="with --fsdp: fp8dot's layers cast with each rank's own tensorwise "
                             "scales instead of the global batch's")
    parser.add_argument("--fp8-all-gather", action="store_true",
                        help="with --fsdp and --linear fp8dot: FSDP2 gathers fp8dot's weights in "
                             "FP8, each rank casting its shard (fp8dot.torch.fp8_all_gather), "
                             "their amaxes reduced together after each optimizer step "
                             "(fp8dot.torch.precompute_fp8_all_gather_scales)")
    args = parser.parse_args(argv)
    if args.no_amax_reduction and not args.fsdp:
        parser.error("--no-amax-reduction applies to --fsdp")
    if args.fp8_all_gather and not (args.fsdp and args.linear == "fp8dot"):
        parser.error("--fp8-all-gather applies to --fsdp with --linear fp8dot")
    if args.recipe != "seed" and args.linear == "bf16":
        parser.error("--recipe applies to --linear fp8dot and torchao")
    if args.autotune and args.linear != "fp8dot":
        parser.error("--autotune applies to --linear fp8dot")
    if args.recompute_weight_transpose and args.linear != "fp8dot":
        parser.error("--recompute-weight-transpose applies to --linear fp8dot")
    if args.autotune < 0:
        parser.error(f"--autotune takes a number of candidates >= 0, not {args.autotune}")
    if args.linear == "torchao" and args.recipe not in TORCHAO_RECIPES:
        parser.error(f"--linear torchao takes --recipe {' or '.join(sorted(TORCHAO_RECIPES))}")
    fill_from_config(args)
    return args


def write_profile(profiler: torch.profiler.profile, path: Path, device: torch.device, last_step: int,
                  step_seconds: list[float]) -> None:
    """Stops the profiler and writes its op table, the ops that took the most time first, and
    on a GPU the kernels' timeline (fp8dot.torch.timeline: idle time, what the GPU waited for)."""
    profiler.stop()
    sort_key = "self_device_time_total" if device.type == "cuda" else "self_cpu_time_total"
    path.parent.mkdir(parents=True, exist_ok=True)
    timeline = ""
    if device.type == "cuda" and step_seconds:
        from fp8dot.torch.timeline import summarize as summarize_timeline

        # The whole timeline, host and GPU, for a closer look (chrome://tracing, Perfetto).
        profiler.export_chrome_trace(str(path.with_suffix(".trace.json")))
        timeline = summarize_timeline(profiler.events(), len(step_seconds),
                                      1000 * sum(step_seconds) / len(step_seconds)) + "\n"
    path.write_text(timeline + profiler.key_averages().table(sort_by=sort_key, row_limit=40) +
                    "\nBy input shape:\n" +
                    profiler.key_averages(group_by_input_shape=True).table(sort_by=sort_key,
                                                                           row_limit=60))
    print(f"profile of steps {PROFILED_STEPS[0]}-{last_step} written to {path}")


@torch.no_grad()
def validation_loss(model, batches, device, autocast, parallel=None) -> float:
    """The mean loss over the fixed validation windows (every batch the same size); with
    --fsdp each rank takes its rows of every batch."""
    model.eval()
    total = torch.zeros((), device=device)
    for tokens, targets in batches:
        if parallel:
            tokens, targets = parallel.rows(tokens), parallel.rows(targets)
        with autocast():
            total += model(tokens.to(device), targets.to(device)).float()
    model.train()
    if parallel:
        total = parallel.mean(total)
    return total.item() / len(batches)


def main(argv: list[str] | None = None) -> dict:
    args = parse_args(argv)
    parallel = DataParallel(torch.device(args.device).type) if args.fsdp else None
    device = parallel.device if parallel else torch.device(args.device)
    if parallel:
        parallel.check_batch(args.batch_size)
    torch.manual_seed(args.seed)
    # The batches are drawn on the CPU from their own generator: the same bytes on every
    # device, whatever the model's initialisation consumed from the global generator.
    batch_generator = torch.Generator().manual_seed(args.seed + 1)

    corpus = load_corpus(with_tests=not args.no_stdlib_tests)
    print(corpus.describe())
    eval_batches = evaluation_batches(corpus.validation, args.batch_size, args.seq_len, args.eval_batches)

    config = GPTConfig(VOCAB_SIZE, args.seq_len, args.d_model, args.layers, args.heads, args.mlp)
    model = GPT(config).to(device)
    counts = parameter_counts(model)
    print(f"model: {config}, MLP hidden {config.mlp_hidden}")
    print("parameters: " + ", ".join(f"{k} {v:,}" for k, v in counts.items()))
    linear_description = swap_block_linears(model, args.linear, args.recipe,
                                            args.recompute_weight_transpose)
    if args.autotune:
        import fp8dot

        fp8dot.set_autotune(args.autotune)
        linear_description += f"\nGEMM plans autotuned: {args.autotune} candidates each"
    fused = [m for m in model.modules() if isinstance(m, MLP) and m.kind == "swiglu" and
             hasattr(m.down, "swiglu")]
    for mlp in fused:
        mlp.fused_swiglu = args.fused_swiglu
    if fused:
        linear_description += ("\nSwiGLU: SiLU(gate)·up " + (
            "quantised inside the down projection's FP8 cast (Linear.swiglu, --fused-swiglu), "
            "never written" if args.fused_swiglu else "written in bf16, then quantised"))
    print(linear_description)
    if parallel:  # before the optimizer: it holds the sharded parameters
        parallel.shard(model, amax_reduction=not args.no_amax_reduction,
                       fp8_all_gather=args.fp8_all_gather)
        print(f"FSDP2 over {parallel.world} processes, "
              f"{args.batch_size // parallel.world} sequences each; fp8dot amaxes "
              + ("per rank" if args.no_amax_reduction else "reduced over the ranks")
              + ("; fp8dot's weights gathered in FP8" if args.fp8_all_gather else ""))
    # After the swap: the optimizer must hold the parameters the swapped layers train.
    optimizer = make_adamw(model, args.lr, args.weight_decay, fused=device.type == "cuda")
    step_model = torch.compile(model, mode=args.compile_mode) if args.compile else model

    autocast = lambda: torch.autocast(device.type, dtype=torch.bfloat16, enabled=args.dtype == "bf16")
    tokens_per_step = args.batch_size * args.seq_len
    # torchao's default config is plain "torchao" (the peer every comparison names).
    label = args.linear + (f"-{args.recipe}" if args.linear == "fp8dot" or
                           (args.linear == "torchao" and args.recipe != "seed") else "")
    if fused and args.fused_swiglu:
        label += "-fused-swiglu"
    log = RunLog(args.log if parallel is None or parallel.rank == 0 else None, args.steps,
                 tokens_per_step)
    log.record(
        type="run", framework="torch", label=label,
        **{k: getattr(args, k) for k in HYPERPARAMETERS},
        linear=args.linear, recipe=args.recipe if args.linear != "bf16" else None,
        dtype=args.dtype, compile=args.compile,
        compile_mode=args.compile_mode if args.compile else None, seed=args.seed, device=str(device),
        processes=parallel.world if parallel else 1,
        amax_reduction=None if parallel is None else not args.no_amax_reduction,
        fp8_all_gather=args.fp8_all_gather, autotune=args.autotune,
        recompute_weight_transpose=args.recompute_weight_transpose,
        device_name=torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
        torch_version=torch.__version__, python_version=corpus.python_version,
        corpus_sha256=corpus.sha256, corpus_train_bytes=len(corpus.train),
        corpus_validation_bytes=len(corpus.validation), parameters=counts,
        linear_description=linear_description, argv=sys.argv if argv is None else argv,
    )
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)

    def evaluate(step: int) -> float:
        loss = validation_loss(step_model, eval_batches, device, autocast, parallel)
        log.evaluation(step, loss)
        return loss

    val_loss = evaluate(0)
    profiler = None
    profiled_seconds: list[float] = []
    started = time.perf_counter()
    for step in range(1, args.steps + 1):
        if args.profile and step == PROFILED_STEPS[0]:
            profiler = torch.profiler.profile(record_shapes=True)
            profiler.start()
        step_start = time.perf_counter()
        lr = lr_at(step, peak_lr=args.lr, warmup_steps=args.warmup, total_steps=args.steps,
                   min_lr_ratio=args.min_lr_ratio)
        set_lr(optimizer, lr)
        tokens, targets = random_batch(corpus.train, args.batch_size, args.seq_len, batch_generator)
        if parallel:
            tokens, targets = parallel.rows(tokens), parallel.rows(targets)
        with autocast():
            loss = step_model(tokens.to(device, non_blocking=True), targets.to(device, non_blocking=True))
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), args.grad_clip)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if parallel:
            parallel.after_optimizer_step()
            loss, grad_norm = parallel.mean(loss), full_value(grad_norm)
        loss_value, grad_norm_value = loss.item(), grad_norm.item()  # .item() waits for the GPU
        seconds = time.perf_counter() - step_start
        if profiler is not None:
            profiled_seconds.append(seconds)
            if step == PROFILED_STEPS[-1]:
                write_profile(profiler, args.profile, device, step, profiled_seconds)
                profiler = None

        if not log.train_step(step, loss_value, lr, grad_norm_value, seconds):
            break
        if step % args.eval_every == 0 or step == args.steps:
            val_loss = evaluate(step)

    if profiler is not None:  # the run stopped inside the profiled steps
        write_profile(profiler, args.profile, device, len(log.train_losses), profiled_seconds)
    summary = log.summary(
        label=label, linear=args.linear, recipe=args.recipe if args.linear != "bf16" else None,
        val_loss=val_loss, train_seconds=time.perf_counter() - started, counts=counts,
        peak_memory_bytes=torch.cuda.max_memory_allocated(device) if device.type == "cuda" else None,
    )
    result = log.finish(summary, "torch.cuda.max_memory_allocated")
    if parallel:
        parallel.close()
    return result


if __name__ == "__main__":
    main()
    end_rank_process()
