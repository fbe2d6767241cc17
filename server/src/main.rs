//! `sanguo`: the command-line face of the engine (and, later, the server).
//!
//! The engine commands print plain, stable text so that other tools and the
//! project's own tests can check the rules from outside.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use engine::{Direction, Position, format_position, parse_move, parse_position, perft, perft_divide};

#[derive(Parser, Debug)]
#[command(
    name = "sanguo",
    version,
    about = "Three Kingdoms chess (三国象棋): rules engine tools"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Print the legal moves, one per line, in canonical order.
    Moves {
        /// Position text (RULES §7); the initial position if omitted.
        #[arg(long)]
        position: Option<String>,
    },
    /// Play moves and print the resulting position text.
    Play {
        /// Position text (RULES §7); the initial position if omitted.
        #[arg(long)]
        position: Option<String>,
        /// Moves such as W72-W54.
        moves: Vec<String>,
    },
    /// Count move sequences of length DEPTH; the total is the last line.
    Perft {
        /// Position text (RULES §7); the initial position if omitted.
        #[arg(long)]
        position: Option<String>,
        /// Depth in plies.
        depth: u32,
        /// Also print the count below each root move (`MOVE: COUNT`).
        #[arg(long)]
        divide: bool,
    },
    /// Write the board tables (points.tsv, lines.txt, cells.txt, diagonals.txt,
    /// tian.txt, ri.txt) in the formats of shared/board/.
    Tables {
        /// Directory to write into (created if missing).
        dir: PathBuf,
    },
}

fn position(text: Option<&str>) -> Result<Position> {
    match text {
        None => Ok(Position::initial(Direction::Ccw)),
        Some(t) => parse_position(t).map_err(|e| anyhow::anyhow!("--position: {e}")),
    }
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Moves { position: p } => {
            let pos = position(p.as_deref())?;
            let mut out = String::new();
            for m in pos.legal_moves() {
                out.push_str(&m.to_string());
                out.push('\n');
            }
            print!("{out}");
        }
        Command::Play { position: p, moves } => {
            let mut pos = position(p.as_deref())?;
            // A side to move without a legal move is mated at the start of its turn (RULES §5).
            pos.resolve_turn();
            for (i, text) in moves.iter().enumerate() {
                let m = parse_move(text).map_err(|e| anyhow::anyhow!("move {} '{text}': {e}", i + 1))?;
                pos.play(m)
                    .map_err(|e| anyhow::anyhow!("move {} '{text}': {e}", i + 1))?;
            }
            println!("{}", format_position(&pos));
        }
        Command::Perft {
            position: p,
            depth,
            divide,
        } => {
            let pos = position(p.as_deref())?;
            if divide {
                let rows = perft_divide(&pos, depth);
                let mut total = 0;
                for (m, n) in &rows {
                    println!("{m}: {n}");
                    total += n;
                }
                println!("{}", if depth == 0 { 1 } else { total });
            } else {
                println!("{}", perft(&pos, depth));
            }
        }
        Command::Tables { dir } => {
            std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
            for (name, text) in engine::tables::all() {
                let path = dir.join(name);
                std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
            }
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sanguo: {e:#}");
            ExitCode::FAILURE
        }
    }
}
