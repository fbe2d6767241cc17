//! 三国暗棋 perft from the sample layout's initial position (RULES-ANQI §12):
//! nodes per second, single-threaded.
//!
//! `cargo bench -p engine --bench anqi_perft`; criterion reports the throughput
//! in elements (nodes) per second.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use engine::anqi::AnqiPosition;

fn bench_perft(c: &mut Criterion) {
    let pos = AnqiPosition::sample();
    let mut group = c.benchmark_group("anqi_perft");
    group.sample_size(10).measurement_time(Duration::from_secs(20));
    for depth in [4u32, 5] {
        let nodes = pos.perft(depth);
        group.throughput(Throughput::Elements(nodes));
        group.bench_function(format!("sample-depth{depth}"), |b| {
            b.iter(|| black_box(&pos).perft(black_box(depth)))
        });
    }
    // The same tree with every leaf played (no bulk counting at depth 1): make-move speed.
    fn full(p: &AnqiPosition, depth: u32) -> u64 {
        if depth == 0 {
            return 1;
        }
        let mut n = 0;
        for m in p.legal_moves() {
            let mut q = p.clone();
            q.play_unchecked(m);
            n += full(&q, depth - 1);
        }
        n
    }
    let nodes = pos.perft(4);
    group.throughput(Throughput::Elements(nodes));
    group.bench_function("sample-depth4-every-leaf-played", |b| {
        b.iter(|| full(black_box(&pos), black_box(4)))
    });
    group.finish();
}

fn bench_movegen(c: &mut Criterion) {
    let pos: AnqiPosition = "????1????/????1????/9/????1rAK1/????1???? 3 213 123 -/C/- 6 split1"
        .parse()
        .expect("the §11.3 example");
    c.bench_function("anqi_legal_moves/example", |b| b.iter(|| black_box(&pos).legal_moves()));
}

criterion_group!(benches, bench_perft, bench_movegen);
criterion_main!(benches);
