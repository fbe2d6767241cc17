use engine::{Direction, Position, perft};

#[test]
fn start() {
    let p = Position::initial(Direction::Ccw);
    for d in 1..=3 {
        println!("ccw {d} {}", perft(&p, d));
    }
    let p = Position::initial(Direction::Cw);
    for d in 1..=3 {
        println!("cw {d} {}", perft(&p, d));
    }
}
