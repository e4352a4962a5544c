//! Contract suite for [`ComputerBackend`], run against a real desktop (the X11 adapter runs
//! it under Xvfb).
//!
//! | rule | what must hold |
//! |---|---|
//! | 1 | the screen has a size, and a frame has that size and `width × height × 3` bytes |
//! | 2 | after a move, the pointer reads back where it was sent (corners included) |
//! | 3 | a click and a double click leave the pointer on their point |
//! | 4 | a drag ends at its target; a scroll leaves the pointer on its point |
//! | 5 | a point off the screen is `Invalid` and moves nothing |
//! | 6 | an unknown key name is `Invalid`; a known chord is performed |
//! | 7 | typing plain ASCII succeeds |

use crate::{ComputerBackend, ComputerError, ComputerInput, MouseButton, Point, ScrollDirection};

/// Runs every rule of the computer-backend contract on `backend`.
pub async fn computer_backend_contract(backend: &dyn ComputerBackend) {
    let size = backend
        .screen()
        .await
        .unwrap_or_else(|e| panic!("computer contract rule 1: screen() failed: {e}"));
    assert!(
        size.width > 0 && size.height > 0,
        "computer contract rule 1: the screen has a size"
    );
    let frame = backend
        .capture()
        .await
        .unwrap_or_else(|e| panic!("computer contract rule 1: capture() failed: {e}"));
    assert_eq!(
        frame.size, size,
        "computer contract rule 1: a frame has the screen's size"
    );
    assert_eq!(
        frame.rgb.len(),
        size.width as usize * size.height as usize * 3,
        "computer contract rule 1: a frame holds 3 bytes per pixel"
    );

    let corners = [
        Point::new(0, 0),
        Point::new(size.width - 1, size.height - 1),
        Point::new(size.width / 3, size.height / 2),
    ];
    for to in corners {
        perform(backend, &ComputerInput::Move { to }, "rule 2").await;
        assert_eq!(
            backend.pointer().await.unwrap(),
            to,
            "computer contract rule 2: the pointer reads back where it was moved"
        );
    }

    for count in [1, 2] {
        let at = Point::new(size.width / 4 + u32::from(count), size.height / 4);
        let click = ComputerInput::Click {
            at,
            button: MouseButton::Left,
            count,
        };
        perform(backend, &click, "rule 3").await;
        assert_eq!(
            backend.pointer().await.unwrap(),
            at,
            "computer contract rule 3: a click of {count} leaves the pointer on its point"
        );
    }

    let to = Point::new(size.width / 2, size.height / 3);
    let drag = ComputerInput::Drag {
        from: Point::new(size.width / 5, size.height / 5),
        to,
    };
    perform(backend, &drag, "rule 4").await;
    assert_eq!(
        backend.pointer().await.unwrap(),
        to,
        "computer contract rule 4: a drag ends at its target"
    );
    let at = Point::new(size.width / 2 + 1, size.height / 2 + 1);
    let scroll = ComputerInput::Scroll {
        at,
        direction: ScrollDirection::Down,
        amount: 2,
    };
    perform(backend, &scroll, "rule 4").await;
    assert_eq!(
        backend.pointer().await.unwrap(),
        at,
        "computer contract rule 4: a scroll leaves the pointer on its point"
    );

    let before = backend.pointer().await.unwrap();
    for off in [
        Point::new(size.width, 0),
        Point::new(0, size.height),
        Point::new(u32::MAX, u32::MAX),
    ] {
        let result = backend.perform(&ComputerInput::Move { to: off }).await;
        assert!(
            matches!(result, Err(ComputerError::Invalid(_))),
            "computer contract rule 5: moving to {off:?} off a {size:?} screen is Invalid, got {result:?}"
        );
    }
    assert_eq!(
        backend.pointer().await.unwrap(),
        before,
        "computer contract rule 5: a refused move moves nothing"
    );

    let unknown = backend
        .perform(&ComputerInput::Key {
            chord: "ctrl+NoSuchKey".to_owned(),
        })
        .await;
    assert!(
        matches!(unknown, Err(ComputerError::Invalid(_))),
        "computer contract rule 6: an unknown key name is Invalid, got {unknown:?}"
    );
    perform(
        backend,
        &ComputerInput::Key {
            chord: "shift+Tab".to_owned(),
        },
        "rule 6",
    )
    .await;

    perform(
        backend,
        &ComputerInput::Type {
            text: "Hello, world 42!".to_owned(),
        },
        "rule 7",
    )
    .await;
}

async fn perform(backend: &dyn ComputerBackend, input: &ComputerInput, rule: &str) {
    backend
        .perform(input)
        .await
        .unwrap_or_else(|e| panic!("computer contract {rule}: {input:?} failed: {e}"));
}
