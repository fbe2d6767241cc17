//! perft from the start position: nodes per second, single-threaded.
//!
//! `cargo bench -p engine --bench perft`; criterion reports the throughput in
//! elements (nodes) per second.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use engine::{Direction, Position, perft};

mod common;
use common::playouts::playout_positions;

fn bench_perft(c: &mut Criterion) {
    let mut group = c.benchmark_group("perft");
    group.sample_size(10).measurement_time(Duration::from_secs(20));
    for (name, dir) in [("ccw", Direction::Ccw), ("cw", Direction::Cw)] {
        let pos = Position::initial(dir);
        for depth in [3u32, 4] {
            let nodes = perft(&pos, depth);
            group.throughput(Throughput::Elements(nodes));
            group.bench_function(format!("start-{name}-depth{depth}"), |b| {
                b.iter(|| perft(black_box(&pos), black_box(depth)))
            });
        }
    }
    group.finish();
}

fn bench_movegen(c: &mut Criterion) {
    let pos = Position::initial(Direction::Ccw);
    c.bench_function("legal_moves/start", |b| b.iter(|| black_box(&pos).legal_moves()));
    // What a server computes after every move: the legal moves of positions
    // met in play (random playouts, a fixed seed; ~6,000 positions).
    let positions = playout_positions(40, 150);
    let mut group = c.benchmark_group("legal_moves");
    group.throughput(Throughput::Elements(positions.len() as u64));
    group.bench_function("playouts", |b| {
        b.iter(|| {
            positions
                .iter()
                .map(|p| black_box(p).legal_moves().len())
                .sum::<usize>()
        })
    });
    group.finish();
}

criterion_group!(benches, bench_perft, bench_movegen);
criterion_main!(benches);
