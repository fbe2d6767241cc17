//! How each variant's board is drawn: a [`BoardDescription`] per variant,
//! sent to clients in `GET /api/variants`, so that the browser draws any
//! board from data (as pychess-variants does) instead of re-deriving its
//! geometry in JavaScript. Adding a variant adds an arm here.

use std::collections::BTreeMap;

use engine::{Piece, Point, Role, Side, Variant};
use protocol::{BoardArc, BoardArea, BoardDescription, BoardExtent, BoardLabel, BoardPoint, BoardView};

/// The description of `variant`'s board.
pub fn describe(variant: Variant) -> BoardDescription {
    match variant {
        Variant::Sanguo => sanguo(),
        Variant::Anqi => anqi(),
        Variant::Yanyi => yanyi(),
    }
}

/// 三国演弈棋 (RULES-YANYI §2), from the engine's own description
/// (`engine::yanyi::board::description`): the 17×17 cross, camps, 防线 and
/// 国境线, palaces with their diagonals (the 汉 palace's too), 中原, the three
/// 结盟点 labelled 魏/蜀/吴 and the corner peoples. The engine draws x east and
/// y south from the north-west corner; here the centre `i9` is the origin and y
/// points up. Each seat's view turns its camp to the bottom: 蜀 south (0°),
/// 吴 east (90°), 魏 north (180°).
fn yanyi() -> BoardDescription {
    use engine::yanyi::board::description;
    let d = description();
    let at = |(x, y): (f64, f64)| (x - 8.0, 8.0 - y);
    let name = |p: engine::yanyi::Point| p.to_string();
    let points = d
        .points
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let (x, y) = at(p.coords);
            BoardPoint {
                name: p.name.clone(),
                index: i as u32,
                x,
                y,
            }
        })
        .collect();
    let coords: std::collections::HashMap<String, (f64, f64)> =
        d.points.iter().map(|p| (p.name.clone(), p.coords)).collect();
    let segments = d
        .lines
        .iter()
        .chain(&d.diagonals)
        .map(|&(a, b)| [name(a), name(b)])
        .collect();
    let mut areas = Vec::new();
    for r in &d.regions {
        let colour = r.colour.map_or("centre".to_owned(), |c| c.letter().to_string());
        let names: Vec<String> = r.points.iter().map(|&p| name(p)).collect();
        // A region is a point set; an area is drawn through its outline's corners
        // (every region here is a rectangle of points, or a row of them).
        let xy = |n: &String| coords[n];
        let (min_x, max_x, min_y, max_y) = names
            .iter()
            .map(xy)
            .fold((f64::MAX, f64::MIN, f64::MAX, f64::MIN), |(a, b, c, d), (x, y)| {
                (a.min(x), b.max(x), c.min(y), d.max(y))
            });
        let corner = |x: f64, y: f64| names.iter().find(|n| xy(n) == (x, y)).cloned().unwrap_or_default();
        let mut outline = vec![
            corner(min_x, min_y),
            corner(max_x, min_y),
            corner(max_x, max_y),
            corner(min_x, max_y),
        ];
        outline.dedup();
        if outline.first() == outline.last() && outline.len() > 1 {
            outline.pop();
        }
        outline.retain(|n| !n.is_empty());
        let kind = r.kind.replace(' ', "-");
        areas.push(BoardArea {
            class: format!("area {kind} {kind}-{colour}"),
            points: outline,
        });
    }
    let mut labels: Vec<BoardLabel> = d
        .alliance_points
        .iter()
        .map(|&(p, player, text)| {
            let (x, y) = at(coords[&name(p)]);
            BoardLabel {
                text: text.to_owned(),
                x,
                y: y - 0.45,
                class: format!("alliance-label label-{}", player.letter()),
            }
        })
        .collect();
    labels.extend(d.corners.iter().map(|&(text, c)| {
        let (x, y) = at(c);
        BoardLabel {
            text: text.to_owned(),
            x,
            y,
            class: "corner-label".to_owned(),
        }
    }));
    let chars = |k: char, a: char, e: char, p: char| {
        [
            ('K', k),
            ('A', a),
            ('E', e),
            ('N', '马'),
            ('R', '车'),
            ('C', '炮'),
            ('P', p),
        ]
        .into_iter()
        .map(|(l, c)| (l.to_string(), c.to_string()))
        .collect::<BTreeMap<_, _>>()
    };
    let han = [('K', '汉'), ('R', '车'), ('C', '炮')]
        .into_iter()
        .map(|(l, c)| (l.to_string(), c.to_string()))
        .collect();
    BoardDescription {
        points,
        segments,
        dashed: Vec::new(),
        arcs: Vec::new(),
        areas,
        labels,
        rings: d.alliance_points.iter().map(|&(p, _, _)| name(p)).collect(),
        views: [("G", 90.0), ("B", 180.0), ("R", 0.0)]
            .map(|(side, rotation)| BoardView {
                side: side.to_owned(),
                rotation,
            })
            .to_vec(),
        extent: BoardExtent {
            half_width: 8.8,
            top: -8.8,
            bottom: 8.8,
        },
        pieces: BTreeMap::from([
            ("G".to_owned(), chars('吴', '士', '相', '兵')),
            ("B".to_owned(), chars('魏', '士', '象', '卒')),
            ("R".to_owned(), chars('蜀', '仕', '相', '兵')),
            ("Y".to_owned(), han),
        ]),
    }
}

/// 三国暗棋 (RULES-ANQI §1): half a xiangqi board, 9 files × 5 ranks of
/// points `a1`…`i5` (index 9·(rank − 1) + (file − 1)), no palace, river or
/// diagonals; the four 4×2 corner blocks where the pieces start face down are
/// tinted. The board has no home sides: every seat sees it the same way up.
/// Pieces are identities (upper case red, lower case black), under the owner `*`.
fn anqi() -> BoardDescription {
    let name = |f: u8, r: u8| format!("{}{r}", char::from(b'a' + f - 1));
    let mut points = Vec::new();
    for r in 1..=5u8 {
        for f in 1..=9u8 {
            points.push(BoardPoint {
                name: name(f, r),
                index: u32::from(9 * (r - 1) + (f - 1)),
                x: f64::from(f) - 5.0,
                y: f64::from(r) - 3.0,
            });
        }
    }
    let mut segments = Vec::new();
    for r in 1..=5 {
        segments.push([name(1, r), name(9, r)]);
    }
    for f in 1..=9 {
        segments.push([name(f, 1), name(f, 5)]);
    }
    let areas = [
        ("sw", (1, 1), (4, 2)),
        ("se", (6, 1), (9, 2)),
        ("nw", (1, 4), (4, 5)),
        ("ne", (6, 4), (9, 5)),
    ]
    .into_iter()
    .map(|(block, (f0, r0), (f1, r1))| BoardArea {
        class: format!("area area-block block-{block}"),
        points: vec![name(f0, r0), name(f1, r0), name(f1, r1), name(f0, r1)],
    })
    .collect();
    let chars = [
        ('K', '帅'),
        ('A', '仕'),
        ('E', '相'),
        ('R', '伡'),
        ('N', '㐷'),
        ('C', '炮'),
        ('P', '兵'),
        ('k', '将'),
        ('a', '士'),
        ('e', '象'),
        ('r', '车'),
        ('n', '马'),
        ('c', '包'),
        ('p', '卒'),
    ];
    BoardDescription {
        points,
        segments,
        dashed: Vec::new(),
        arcs: Vec::new(),
        areas,
        labels: Vec::new(),
        rings: Vec::new(),
        views: ["1", "2", "3"]
            .map(|seat| BoardView {
                side: seat.to_owned(),
                rotation: 0.0,
            })
            .to_vec(),
        extent: BoardExtent {
            half_width: 4.8,
            top: -2.8,
            bottom: 2.8,
        },
        pieces: BTreeMap::from([(
            "*".to_owned(),
            chars.into_iter().map(|(l, c)| (l.to_string(), c.to_string())).collect(),
        )]),
    }
}

fn pair(a: impl ToString, b: impl ToString) -> [String; 2] {
    [a.to_string(), b.to_string()]
}

/// Rotates `(x, y)` counterclockwise by `degrees`.
fn rotate((x, y): (f64, f64), degrees: f64) -> (f64, f64) {
    let (s, c) = degrees.to_radians().sin_cos();
    (x * c - y * s, x * s + y * c)
}

/// 三国象棋 (RULES §2): three 9×6 rectangles, their fans of five arcs
/// centred beside each rectangle, the axis lines through the centre O,
/// dashed palace and rear-palace diagonals.
fn sanguo() -> BoardDescription {
    let rect = |s: Side, f: u8, r: u8| Point::rect(s, f, r);
    let points = Point::all()
        .map(|p| {
            let (x, y) = p.coords();
            let fix = |v: f64| if v.abs() < 5e-10 { 0.0 } else { v };
            BoardPoint {
                name: p.to_string(),
                index: p.index() as u32,
                x: fix(x),
                y: fix(y),
            }
        })
        .collect();
    let mut segments = Vec::new();
    let mut dashed = Vec::new();
    let mut arcs = Vec::new();
    let mut areas = Vec::new();
    let mut labels = Vec::new();
    let h = 2.0 * 3f64.sqrt();
    for (i, x) in Side::ALL.into_iter().enumerate() {
        // The next side counterclockwise: the fan's far side.
        let n = Side::ALL[(i + 1) % 3];
        for r in 1..=6 {
            segments.push(pair(rect(x, 1, r), rect(x, 9, r)));
        }
        for f in 1..=9 {
            segments.push(pair(rect(x, f, 1), rect(x, f, 6)));
        }
        // Five arcs centred at P_X from X's file f to N's file 10 − f: from
        // 180° to 120° about P_X, clockwise once y points down.
        for f in 5..=9u8 {
            arcs.push(BoardArc {
                from: rect(x, f, 6).to_string(),
                to: rect(n, 10 - f, 6).to_string(),
                radius: f64::from(11 - f),
                sweep: 1,
            });
        }
        segments.push(pair(Point::O, Point::mid(x, 9)));
        segments.push(pair(rect(x, 5, 6), Point::O));
        segments.push(pair(Point::quarter(x, 6), Point::quarter(x, 7)));
        dashed.push(pair(rect(x, 4, 2), rect(x, 6, 4)));
        dashed.push(pair(rect(x, 6, 2), rect(x, 4, 4)));
        for (a, b) in [((4, 1), (5, 2)), ((4, 2), (5, 1)), ((5, 1), (6, 2)), ((5, 2), (6, 1))] {
            dashed.push(pair(rect(x, a.0, a.1), rect(x, b.0, b.1)));
        }
        areas.push(BoardArea {
            class: format!("area area-{}", x.letter()),
            points: [(1, 1), (9, 1), (9, 6), (1, 6)]
                .map(|(f, r)| rect(x, f, r).to_string())
                .to_vec(),
        });
        let (lx, ly) = rotate((0.0, -(h + 5.8)), 120.0 * i as f64);
        labels.push(BoardLabel {
            text: x.kingdom().to_string(),
            x: lx,
            y: ly,
            class: format!("side-label label-{}", x.letter()),
        });
    }
    let pieces = Side::ALL
        .into_iter()
        .map(|side| {
            let chars = Role::ALL
                .into_iter()
                .map(|role| (role.letter().to_string(), Piece { side, role }.character().to_string()))
                .collect::<BTreeMap<_, _>>();
            (side.letter().to_string(), chars)
        })
        .collect();
    BoardDescription {
        points,
        segments,
        dashed,
        arcs,
        areas,
        labels,
        rings: vec![Point::O.to_string()],
        views: Side::ALL
            .into_iter()
            .enumerate()
            .map(|(i, s)| BoardView {
                side: s.letter().to_string(),
                rotation: 120.0 * i as f64,
            })
            .collect(),
        // Three-fold symmetric: every view spans the same box.
        extent: BoardExtent {
            half_width: 9.8,
            top: -8.2,
            bottom: 9.8,
        },
        pieces,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_drawn_point_exists_and_every_point_is_listed() {
        for v in Variant::ALL {
            let d = describe(v);
            let names: std::collections::HashSet<&str> = d.points.iter().map(|p| p.name.as_str()).collect();
            assert_eq!(names.len(), d.points.len(), "{v}: names are unique");
            for (i, p) in d.points.iter().enumerate() {
                assert_eq!(p.index as usize, i, "{v}: points in index order");
            }
            let drawn = d
                .segments
                .iter()
                .chain(&d.dashed)
                .flatten()
                .chain(d.arcs.iter().flat_map(|a| [&a.from, &a.to]))
                .chain(d.areas.iter().flat_map(|a| &a.points))
                .chain(&d.rings);
            for n in drawn {
                assert!(names.contains(n.as_str()), "{v}: {n} is not a point");
            }
            assert_eq!(d.views.len(), 3, "{v}: a view per seat");
        }
    }

    #[test]
    fn anqi_is_half_a_xiangqi_board() {
        let d = describe(Variant::Anqi);
        assert_eq!(d.points.len(), 45);
        assert_eq!(d.points[22].name, "e3", "the centre is index 22");
        assert_eq!((d.points[22].x, d.points[22].y), (0.0, 0.0));
        assert_eq!(d.points[44].name, "i5");
        assert_eq!(d.segments.len(), 14);
        assert_eq!(
            d.areas.iter().map(|a| a.points.len()).sum::<usize>(),
            16,
            "four corner blocks"
        );
        assert_eq!(d.pieces["*"].len(), 14);
    }

    #[test]
    fn yanyi_has_225_points_and_its_regions() {
        let d = describe(Variant::Yanyi);
        assert_eq!(d.points.len(), 225);
        let by = |n: &str| d.points.iter().find(|p| p.name == n).unwrap();
        assert_eq!((by("i9").x, by("i9").y), (0.0, 0.0), "the centre");
        assert_eq!((by("i1").x, by("i1").y), (0.0, -8.0), "蜀's king at the south edge");
        assert_eq!((by("q9").x, by("q9").y), (8.0, 0.0), "吴 east");
        assert_eq!((by("a9").x, by("a9").y), (-8.0, 0.0), "the emperor west");
        assert_eq!(d.segments.len(), 416 + 16);
        assert_eq!(d.rings.len(), 3, "three 结盟点");
        let alliance: Vec<&str> = d
            .labels
            .iter()
            .filter(|l| l.class.starts_with("alliance"))
            .map(|l| l.text.as_str())
            .collect();
        assert_eq!(alliance.len(), 3);
        for k in ["魏", "蜀", "吴"] {
            assert!(alliance.contains(&k), "{alliance:?}");
        }
        for kind in ["camp", "defence-line", "border-line", "palace", "central-block"] {
            assert!(d.areas.iter().any(|a| a.class.contains(kind)), "{kind}");
        }
        assert!(d.areas.iter().all(|a| a.points.len() >= 2), "{:?}", d.areas);
        assert_eq!(d.pieces["Y"]["K"], "汉");
    }

    #[test]
    fn sanguo_has_the_figure_of_rules_2() {
        let d = describe(Variant::Sanguo);
        assert_eq!(d.points.len(), 184);
        assert_eq!(d.arcs.len(), 15, "five arcs per fan");
        assert_eq!(d.dashed.len(), 18, "palace and rear-palace diagonals");
        assert_eq!(d.segments.len(), 3 * (6 + 9 + 3));
        assert_eq!(d.pieces["B"]["A"], "士");
        let w52 = d.points.iter().find(|p| p.name == "W52").unwrap();
        assert!((w52.x - 0.0).abs() < 1e-9 && (w52.y + (2.0 * 3f64.sqrt() + 4.0)).abs() < 1e-9);
    }
}
