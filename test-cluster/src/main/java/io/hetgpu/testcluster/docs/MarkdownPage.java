package io.hetgpu.testcluster.docs;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import org.commonmark.node.AbstractVisitor;
import org.commonmark.node.Code;
import org.commonmark.node.FencedCodeBlock;
import org.commonmark.node.HardLineBreak;
import org.commonmark.node.Heading;
import org.commonmark.node.HtmlBlock;
import org.commonmark.node.HtmlInline;
import org.commonmark.node.Image;
import org.commonmark.node.IndentedCodeBlock;
import org.commonmark.node.Link;
import org.commonmark.node.LinkReferenceDefinition;
import org.commonmark.node.Node;
import org.commonmark.node.SoftLineBreak;
import org.commonmark.node.Text;
import org.commonmark.parser.IncludeSourceSpans;
import org.commonmark.parser.Parser;

/**
 * What the docs check needs of one Markdown file, read by a CommonMark parser: the anchors its headings and
 * {@code <a id>}/{@code <a name>} tags give, the links it makes (inline, reference definitions, images, HTML
 * {@code <a href>} and {@code <img src>}), and its code (inline and blocks), each with the line it is on. Nothing inside code counts as a heading
 * or a link.
 */
record MarkdownPage(String path, Set<String> anchors, List<Target> targets, List<CodeText> code) {

    /** A link's destination as written, on a 1-based line; {@code kind} is "link" or "image". */
    record Target(int line, String kind, String destination) {
    }

    /** The text of an inline code span or a code block; {@code line} is the line its text starts on (1-based). */
    record CodeText(int line, String text) {
    }

    private static final Parser PARSER = Parser.builder().includeSourceSpans(IncludeSourceSpans.BLOCKS_AND_INLINES).build();
    private static final Pattern HTML_ANCHOR = Pattern.compile("<a\\s[^>]*?\\b(?:id|name)\\s*=\\s*[\"']([^\"']+)[\"']",
            Pattern.CASE_INSENSITIVE);
    private static final Pattern HTML_HREF = Pattern.compile("<a\\s[^>]*?\\bhref\\s*=\\s*[\"']([^\"']*)[\"']", Pattern.CASE_INSENSITIVE);
    private static final Pattern HTML_SRC = Pattern.compile("<img\\s[^>]*?\\bsrc\\s*=\\s*[\"']([^\"']*)[\"']", Pattern.CASE_INSENSITIVE);

    /** Reads {@code text}, the file at {@code path} (relative to the checkout, with {@code /}). */
    static MarkdownPage parse(String path, String text) {
        var lines = text.lines().toList();
        var anchors = new LinkedHashSet<String>();
        var targets = new ArrayList<Target>();
        var code = new ArrayList<CodeText>();
        var slugger = new GithubSlugger();
        PARSER.parse(text).accept(new AbstractVisitor() {
            @Override
            public void visit(Heading heading) {
                anchors.add(slugger.slug(plainText(heading).strip()));
                visitChildren(heading);
            }

            @Override
            public void visit(Link link) {
                // [text](dest) is checked here; [text][ref] and [ref] where their definition is.
                if (inline(link, lines)) {
                    targets.add(new Target(line(link), "link", link.getDestination()));
                }
                visitChildren(link);
            }

            @Override
            public void visit(Image image) {
                if (inline(image, lines)) {
                    targets.add(new Target(line(image), "image", image.getDestination()));
                }
                visitChildren(image);
            }

            @Override
            public void visit(LinkReferenceDefinition definition) {
                targets.add(new Target(line(definition), "link", definition.getDestination()));
            }

            @Override
            public void visit(HtmlInline html) {
                html(html.getLiteral(), line(html));
            }

            @Override
            public void visit(HtmlBlock html) {
                html(html.getLiteral(), line(html));
            }

            @Override
            public void visit(Code inline) {
                code.add(new CodeText(line(inline), inline.getLiteral()));
            }

            @Override
            public void visit(FencedCodeBlock block) {
                // The literal starts on the line after the opening fence.
                code.add(new CodeText(line(block) + 1, block.getLiteral()));
            }

            @Override
            public void visit(IndentedCodeBlock block) {
                code.add(new CodeText(line(block), block.getLiteral()));
            }

            private void html(String literal, int firstLine) {
                var anchor = HTML_ANCHOR.matcher(literal);
                while (anchor.find()) {
                    anchors.add(anchor.group(1));
                }
                var href = HTML_HREF.matcher(literal);
                while (href.find()) {
                    targets.add(new Target(firstLine + newlines(literal, href.start()), "link", href.group(1)));
                }
                var src = HTML_SRC.matcher(literal);
                while (src.find()) {
                    targets.add(new Target(firstLine + newlines(literal, src.start()), "image", src.group(1)));
                }
            }
        });
        return new MarkdownPage(path, anchors, targets, code);
    }

    /** A heading's text as GitHub slugs it: markup (backticks, emphasis, link syntax, HTML tags, images) left out. */
    private static String plainText(Node node) {
        var text = new StringBuilder();
        for (var child = node.getFirstChild(); child != null; child = child.getNext()) {
            if (child instanceof Text t) {
                text.append(t.getLiteral());
            } else if (child instanceof Code c) {
                text.append(c.getLiteral());
            } else if (child instanceof SoftLineBreak || child instanceof HardLineBreak) {
                text.append(' ');
            } else if (!(child instanceof HtmlInline) && !(child instanceof Image)) {
                text.append(plainText(child));
            }
        }
        return text.toString();
    }

    /** Whether a link or image is written inline, {@code [text](dest)}: its source ends with the closing parenthesis. */
    private static boolean inline(Node node, List<String> lines) {
        var spans = node.getSourceSpans();
        if (spans.isEmpty()) {
            return true;
        }
        var last = spans.get(spans.size() - 1);
        var end = last.getColumnIndex() + last.getLength() - 1;
        var line = last.getLineIndex() < lines.size() ? lines.get(last.getLineIndex()) : "";
        return end >= 0 && end < line.length() && line.charAt(end) == ')';
    }

    private static int line(Node node) {
        var spans = node.getSourceSpans();
        return spans.isEmpty() ? 0 : spans.get(0).getLineIndex() + 1;
    }

    /** How many line breaks {@code text} has before {@code end}: the line an offset is on, counted from 0. */
    static int newlines(String text, int end) {
        int count = 0;
        for (int i = 0; i < end; i++) {
            if (text.charAt(i) == '\n') {
                count++;
            }
        }
        return count;
    }
}
