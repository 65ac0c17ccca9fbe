package io.hetgpu.testcluster.docs;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The simple commands of a piece of shell quoted in the docs, split into words as a shell splits them: quotes and
 * backslashes honoured, a {@code #} comment dropped, a new command after a newline (not one escaped by {@code \}),
 * {@code ;}, {@code &}, {@code |}, {@code &&}, {@code ||} and parentheses; what a {@code $(…)} holds is a command of its
 * own. Leading variable assignments and {@code sudo}/{@code time}/{@code exec} are dropped, so the first word is the
 * program.
 */
final class ShellWords {

    /** A simple command: its words, and the line of the text it starts on (0 for the first). */
    record Command(int line, List<String> words) {
    }

    private static final Pattern SUBSTITUTION = Pattern.compile("\\$\\(([^()]*)\\)");
    private static final Pattern ASSIGNMENT = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*=.*");
    private static final Pattern CAPITALS = Pattern.compile("[A-Z][A-Z0-9_]*");
    private static final List<String> PREFIXES = List.of("sudo", "time", "exec", "command");

    private ShellWords() {
    }

    static List<Command> commands(String text) {
        var commands = new ArrayList<Command>();
        // $(…) first: its command is taken out, and the substitution is one word of the command around it.
        var substitution = SUBSTITUTION.matcher(text);
        var rest = new StringBuilder();
        while (substitution.find()) {
            var inner = substitution.group(1);
            int line = MarkdownPage.newlines(text, substitution.start(1));
            for (var command : commands(inner)) {
                commands.add(new Command(line + command.line(), command.words()));
            }
            // One word, followed by as many escaped newlines as it spanned, so that the lines after it keep their numbers.
            substitution.appendReplacement(rest, Matcher.quoteReplacement("SUBSTITUTION" + "\\\n".repeat(MarkdownPage.newlines(inner, inner.length()))));
        }
        substitution.appendTail(rest);
        split(rest.toString(), commands);
        return commands;
    }

    /**
     * Whether a word stands for something the reader fills in or a choice ({@code [DIR]}, {@code <goals>}, {@code FILE},
     * {@code …}, {@code --floor=DIR}), or is a redirection: the words from it on are not checked.
     */
    static boolean placeholder(String word) {
        if (word.startsWith("-") && word.contains("=")) {
            return placeholder(word.substring(word.indexOf('=') + 1));
        }
        return word.startsWith("[") || word.startsWith("<") || word.startsWith("{") || word.contains(">")
                || word.contains("...") || word.contains("…") || CAPITALS.matcher(word).matches();
    }

    private static void split(String text, List<Command> commands) {
        var words = new ArrayList<String>();
        var word = new StringBuilder();
        boolean inWord = false;
        int line = 0;
        int commandLine = 0;
        int i = 0;
        while (i < text.length()) {
            char c = text.charAt(i);
            if (c == '\\' && i + 1 < text.length()) {
                if (text.charAt(i + 1) == '\n') {
                    line++;
                } else {
                    if (!inWord && words.isEmpty()) {
                        commandLine = line;
                    }
                    word.append(text.charAt(i + 1));
                    inWord = true;
                }
                i += 2;
                continue;
            }
            if (c == '\'' || c == '"') {
                if (!inWord && words.isEmpty()) {
                    commandLine = line;
                }
                inWord = true;
                int close = i + 1;
                while (close < text.length() && text.charAt(close) != c) {
                    if (c == '"' && text.charAt(close) == '\\' && close + 1 < text.length()) {
                        close++;
                    }
                    if (text.charAt(close) == '\n') {
                        line++;
                    }
                    word.append(text.charAt(close));
                    close++;
                }
                i = close + 1;
                continue;
            }
            if (c == '#' && !inWord) {
                while (i < text.length() && text.charAt(i) != '\n') {
                    i++;
                }
                continue;
            }
            boolean separator = c == '\n' || c == ';' || c == '&' || c == '|' || c == '(' || c == ')';
            if (Character.isWhitespace(c) || separator) {
                if (inWord) {
                    words.add(word.toString());
                    word.setLength(0);
                    inWord = false;
                }
                if (separator) {
                    add(commandLine, words, commands);
                    words = new ArrayList<>();
                }
                if (c == '\n') {
                    line++;
                }
                i++;
                continue;
            }
            if (!inWord && words.isEmpty()) {
                commandLine = line;
            }
            word.append(c);
            inWord = true;
            i++;
        }
        if (inWord) {
            words.add(word.toString());
        }
        add(commandLine, words, commands);
    }

    private static void add(int line, List<String> words, List<Command> commands) {
        int first = 0;
        while (first < words.size() && (ASSIGNMENT.matcher(words.get(first)).matches() || PREFIXES.contains(words.get(first)))) {
            first++;
        }
        if (first < words.size()) {
            commands.add(new Command(line, List.copyOf(words.subList(first, words.size()))));
        }
    }
}
