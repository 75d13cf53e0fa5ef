"""The per-line tints over the code view (the profile's measured share of each HLO line): tints follow the
share and stay on the viewport when scrolled, and the measured-time labels sit in a gutter beside the text,
never over it."""

from __future__ import annotations


def test_line_tints_follow_the_share_and_stay_on_the_viewport_when_scrolled(qtbot):
    from widgets.ir.code_view import CodeView
    from widgets.ir.line_links import LineHighlighter
    from widgets.ir.line_tints import MAX_ALPHA, LineTints

    view = CodeView()
    qtbot.addWidget(view)
    view.resize(500, 200)
    view.show()
    view.set_code("\n".join(f"%op.{i} = f32[8] add(%a, %b)" for i in range(400)))
    tints = LineTints(view)
    links = LineHighlighter(view)  # the source-map link highlights: the same kind of overlay
    links.set_ranges([(3, 4)], scroll=False)
    tints.set_line_tints({3: 0.2, 5: 0.05, 7: 0.0, 390: 0.1}, {3: "200.0 µs · 20.0%"})
    assert tints.tints() == {3: 0.2, 5: 0.05, 390: 0.1}  # zero is no tint
    assert tints.alpha(3) == MAX_ALPHA and tints.alpha(5) == round(MAX_ALPHA / 4) and tints.alpha(7) == 0
    assert tints.label(3) == "200.0 µs · 20.0%" and tints.label(5) == ""
    view.verticalScrollBar().setValue(view.verticalScrollBar().maximum())
    qtbot.wait(50)
    assert tints.geometry() == view.viewport().rect() == links.geometry()  # not scrolled away with the text
    tints.set_line_tints({})
    assert tints.tints() == {} and tints.alpha(3) == 0


def test_measured_labels_sit_in_a_gutter_beside_the_text(qtbot):
    """Issue 29, flaw 16: the labels were drawn at the viewport's right edge, over long HLO lines."""
    from widgets.ir.code_view import CodeView
    from widgets.ir.line_tints import LineTints

    view = CodeView()
    qtbot.addWidget(view)
    view.resize(600, 300)
    view.show()
    view.set_code("\n".join(f"%dot.{i} = f32[8,256]{{1,0}} dot(%a, %b), metadata={{op_name=\"x\" " + "y" * 200
                            for i in range(50)))
    qtbot.waitExposed(view)
    tints = LineTints(view)
    labels = {3: "200.0 µs · 20.0%", 4: "1.0 µs · 0.1%"}
    tints.set_line_tints({3: 0.2, 4: 0.001}, labels)
    qtbot.wait(20)
    port = view.viewport().geometry()
    rects = tints.label_rects()
    assert set(rects) == {3, 4} and tints.gutter.isVisible()
    assert all(r.left() > port.right() for r in rects.values()), (rects, port)  # right of the text, not over it
    assert tints.gutter.geometry().right() <= view.rect().right()
    assert tints.gutter.width() >= view.fontMetrics().horizontalAdvance(labels[3])
    view.resize(800, 300)  # the gutter follows the view
    qtbot.waitUntil(lambda: tints.gutter.geometry().left() == view.viewport().geometry().right() + 1, timeout=2000)
    tints.set_line_tints({})
    assert not tints.gutter.isVisible() and view.viewport().geometry().right() > port.right()
