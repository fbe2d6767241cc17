//! 三国演弈棋 perft from the start position: nodes per second, single-threaded.
//!
//! `cargo bench -p engine --bench yanyi_perft`; criterion reports the
//! throughput in elements (nodes) per second.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use engine::yanyi::{Position, perft};

fn bench_perft(c: &mut Criterion) {
    let mut group = c.benchmark_group("yanyi_perft");
    group.sample_size(10).measurement_time(Duration::from_secs(20));
    let pos = Position::initial();
    for depth in [3u32, 4] {
        let nodes = perft(&pos, depth);
        group.throughput(Throughput::Elements(nodes));
        group.bench_function(format!("start-depth{depth}"), |b| {
            b.iter(|| perft(black_box(&pos), black_box(depth)))
        });
    }
    group.finish();
}

fn bench_movegen(c: &mut Criterion) {
    let pos = Position::initial();
    c.bench_function("yanyi_legal_moves/start", |b| b.iter(|| black_box(&pos).legal_moves()));
}

criterion_group!(benches, bench_perft, bench_movegen);
criterion_main!(benches);
