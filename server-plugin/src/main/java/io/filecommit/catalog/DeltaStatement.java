package io.filecommit.catalog;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The Delta SQL statements Spark's own grammar does not know, recognised by a small parser of their
 * own (the statements of Delta's {@code DeltaSqlBase.g4} grammar that this server runs; Delta's
 * {@code DeltaSqlParser} tries its grammar first and hands everything else to Spark's parser, as
 * {@link DeltaSqlParser} does):
 *
 * <pre>
 * OPTIMIZE (table | 'path') [WHERE predicate] [ZORDER BY (col [, ...]) | ZORDER BY col [, ...]]
 * VACUUM (table | 'path') [RETAIN number HOURS] [DRY RUN]
 * RESTORE [TABLE] (table | 'path') [TO] (VERSION | SYSTEM_VERSION) AS OF (integer | 'integer')
 * RESTORE [TABLE] (table | 'path') [TO] (TIMESTAMP | SYSTEM_TIME) AS OF 'timestamp'
 * (DESCRIBE | DESC) HISTORY (table | 'path') [LIMIT integer]
 * (DESCRIBE | DESC) DETAIL (table | 'path')
 * CONVERT TO DELTA table [PARTITIONED BY (col type [, ...])]
 * </pre>
 *
 * VACUUM also takes Delta's {@code FULL} (the default: every unreferenced file older than the
 * retention). Refused, as statements of their own ({@link Kind#REFUSED}), instead of a syntax
 * error: Delta statements this server does not run ({@code VACUUM ... LITE}, {@code OPTIMIZE ...
 * FULL}, {@code REORG TABLE}, {@code CONVERT TO DELTA ... NO STATISTICS}, {@code GENERATE}), and a time-travel
 * version ({@code t@v1}, {@code VERSION AS OF}, {@code TIMESTAMP AS OF}) given to the target of
 * OPTIMIZE, VACUUM, RESTORE, DELETE, UPDATE or MERGE.
 *
 * where {@code table} is a (possibly qualified, possibly back-quoted) name, {@code delta.`/path`}
 * included. Keywords are case-insensitive; one trailing {@code ;} is allowed.
 *
 * <p>Over 400 lines: one hand-written parser of the grammar above, kept whole so that the grammar
 * reads in one place.
 *
 * @param kind which statement
 * @param table the table's name parts, or null when {@code path} is given
 * @param path the table's path given as a string literal, or null
 * @param where OPTIMIZE's predicate as SQL text, or CONVERT's partition columns as DDL text
 *     ({@code part int, d date}); else null
 * @param zOrderBy OPTIMIZE's Z-order columns, empty for none
 * @param retainHours VACUUM's retention in hours, or null
 * @param dryRun VACUUM's DRY RUN
 * @param version RESTORE's version, or null
 * @param timestamp RESTORE's timestamp text, or null
 * @param limit DESCRIBE HISTORY's LIMIT, or null
 * @param refused for {@code REFUSED}, the statement (or form of one) refused, e.g. {@code VACUUM
 *     LITE} or {@code DELETE on a time-travel version}; else null
 */
record DeltaStatement(Kind kind, List<String> table, String path, String where, List<String> zOrderBy,
    Double retainHours, boolean dryRun, Long version, String timestamp, Integer limit, String refused) {

  /** The statements; {@code REFUSED}: a statement of Delta's this server does not run ({@link #refused}). */
  enum Kind { OPTIMIZE, VACUUM, RESTORE, HISTORY, DETAIL, CONVERT, REFUSED }

  /** How {@link #refused} ends for a statement refused for its time-travel target. */
  static final String ON_TIME_TRAVEL = " on a time-travel version";

  /** A refused statement: {@code what} names it (e.g. {@code REORG TABLE}). */
  private static DeltaStatement refuse(String what) {
    return new DeltaStatement(Kind.REFUSED, null, null, null, List.of(), null, false, null, null, null, what);
  }

  /** {@return whether this statement is refused for its time-travel target, not as a statement} */
  boolean refusedTimeTravel() {
    return refused != null && refused.endsWith(ON_TIME_TRAVEL);
  }

  /** The statement's target for plans and messages: the name or the quoted path. */
  String target() {
    return table != null ? String.join(".", table) : "'" + path + "'";
  }

  /**
   * Parses one statement.
   *
   * @param sql the statement's text
   * @return the statement, or null when the text is not one of these statements (Spark's parser
   *     then parses it, and reports its syntax errors)
   */
  static DeltaStatement parse(String sql) {
    List<Token> tokens;
    try {
      tokens = Token.scan(sql);
    } catch (IllegalArgumentException e) {
      return null;
    }
    if (!tokens.isEmpty() && tokens.get(tokens.size() - 1).is(";")) {
      tokens = tokens.subList(0, tokens.size() - 1);
    }
    Cursor c = new Cursor(sql, tokens);
    try {
      DeltaStatement s = statement(c);
      return s != null && (c.atEnd() || s.kind == Kind.REFUSED) ? s : null;
    } catch (IndexOutOfBoundsException | NumberFormatException e) {
      return null;
    }
  }

  private static DeltaStatement statement(Cursor c) {
    if (c.accept("CONVERT") && c.accept("TO") && c.accept("DELTA")) {
      List<String> name = name(c);
      if (c.accept("NO")) {
        return refuse("CONVERT TO DELTA NO STATISTICS");
      }
      String partitions = null;
      if (c.accept("PARTITIONED")) {
        c.expect("BY");
        int from = c.peek().end();
        c.expect("(");
        int depth = 1;
        Token t = null;
        while (depth > 0) {
          t = c.next();
          depth += t.is("(") ? 1 : t.is(")") ? -1 : 0;
        }
        partitions = c.sql.substring(from, t.start()).trim();
      }
      return new DeltaStatement(Kind.CONVERT, name, null, partitions, List.of(), null, false, null, null, null, null);
    }
    if (c.accept("GENERATE") && c.peek().identifier() && c.peek().value().equalsIgnoreCase("symlink_format_manifest")) {
      return refuse("GENERATE symlink_format_manifest");
    }
    if (c.accept("REORG") && c.accept("TABLE")) {
      return refuse("REORG TABLE");
    }
    if ((c.accept("DELETE") && c.accept("FROM")) || c.accept("UPDATE") || (c.accept("MERGE") && c.accept("INTO"))) {
      String what = c.tokens.get(0).text().toUpperCase(java.util.Locale.ROOT);
      name(c);
      return timeTravel(c) ? refuse(what + ON_TIME_TRAVEL) : null;
    }
    if (c.accept("OPTIMIZE")) {
      Target t = target(c);
      if (timeTravel(c)) {
        return refuse("OPTIMIZE" + ON_TIME_TRAVEL);
      }
      if (c.accept("FULL")) {
        return refuse("OPTIMIZE FULL");
      }
      String where = null;
      if (c.accept("WHERE")) {
        int from = c.peek().start();
        int to = c.sql.length();
        while (!c.atEnd() && !(c.peekIs("ZORDER") && c.peekIs(1, "BY"))) {
          c.next();
        }
        if (!c.atEnd()) {
          to = c.peek().start();
        } else if (!c.tokens.isEmpty()) {
          Token last = c.tokens.get(c.tokens.size() - 1);
          to = last.end();
        }
        where = c.sql.substring(from, to).trim();
        if (where.isEmpty()) {
          return null;
        }
      }
      List<String> z = new ArrayList<>();
      if (c.accept("ZORDER")) {
        c.expect("BY");
        boolean paren = c.accept("(");
        do {
          z.add(String.join(".", name(c)));
        } while (c.accept(","));
        if (paren) {
          c.expect(")");
        }
      }
      return new DeltaStatement(Kind.OPTIMIZE, t.name, t.path, where, List.copyOf(z), null, false, null, null, null, null);
    }
    if (c.accept("VACUUM")) {
      Target t = target(c);
      if (timeTravel(c)) {
        return refuse("VACUUM" + ON_TIME_TRAVEL);
      }
      Double hours = null;
      boolean dry = false;
      if (c.accept("LITE")) {
        return refuse("VACUUM LITE");
      }
      c.accept("FULL");
      if (c.accept("RETAIN")) {
        hours = Double.parseDouble(c.number().text());
        c.expect("HOURS");
      }
      if (c.accept("LITE")) {
        return refuse("VACUUM LITE");
      }
      c.accept("FULL");
      if (c.accept("DRY")) {
        c.expect("RUN");
        dry = true;
      }
      return new DeltaStatement(Kind.VACUUM, t.name, t.path, null, List.of(), hours, dry, null, null, null, null);
    }
    if (c.accept("RESTORE")) {
      c.accept("TABLE");
      Target t = target(c);
      if (c.peekIs("@")) {
        return refuse("RESTORE" + ON_TIME_TRAVEL);
      }
      c.accept("TO");
      c.accept("FOR");
      Long version = null;
      String ts = null;
      if (c.accept("VERSION") || c.accept("SYSTEM_VERSION")) {
        c.expect("AS");
        c.expect("OF");
        Token v = c.next();
        version = Long.parseLong(v.string() ? v.value() : v.text());
      } else if (c.accept("TIMESTAMP") || c.accept("SYSTEM_TIME")) {
        c.expect("AS");
        c.expect("OF");
        Token v = c.next();
        if (!v.string()) {
          return null;
        }
        ts = v.value();
      } else {
        return null;
      }
      return new DeltaStatement(Kind.RESTORE, t.name, t.path, null, List.of(), null, false, version, ts, null, null);
    }
    if (c.accept("DESCRIBE") || c.accept("DESC")) {
      if (c.accept("HISTORY")) {
        Target t = target(c);
        Integer limit = null;
        if (c.accept("LIMIT")) {
          limit = Integer.parseInt(c.number().text());
        }
        return new DeltaStatement(Kind.HISTORY, t.name, t.path, null, List.of(), null, false, null, null, limit, null);
      }
      if (c.accept("DETAIL")) {
        Target t = target(c);
        return new DeltaStatement(Kind.DETAIL, t.name, t.path, null, List.of(), null, false, null, null, null, null);
      }
    }
    return null;
  }

  private record Target(List<String> name, String path) {}

  /** Whether a time-travel spec follows a target: {@code @v1}, {@code VERSION AS OF}, {@code TIMESTAMP AS OF}. */
  private static boolean timeTravel(Cursor c) {
    if (c.peekIs("@")) {
      return true;
    }
    boolean spec = c.peekIs("VERSION") || c.peekIs("TIMESTAMP") || c.peekIs("SYSTEM_VERSION") || c.peekIs("SYSTEM_TIME");
    int at = spec ? 1 : c.peekIs("FOR") ? 2 : -1;
    return at > 0 && c.peekIs(at, "AS") && c.peekIs(at + 1, "OF");
  }

  private static Target target(Cursor c) {
    if (c.peek().string()) {
      return new Target(null, c.next().value());
    }
    return new Target(name(c), null);
  }

  static List<String> name(Cursor c) {
    List<String> parts = new ArrayList<>();
    do {
      Token t = c.next();
      if (!t.identifier()) {
        throw new IndexOutOfBoundsException("not a name: " + t.text());
      }
      parts.add(t.value());
    } while (c.accept("."));
    return List.copyOf(parts);
  }

  /** Tokens and a position. */
  static final class Cursor {
    private final String sql;
    private final List<Token> tokens;
    private int at;

    Cursor(String sql, List<Token> tokens) {
      this.sql = sql;
      this.tokens = tokens;
    }

    boolean atEnd() {
      return at >= tokens.size();
    }

    Token peek() {
      return tokens.get(at);
    }

    boolean peekIs(String word) {
      return peekIs(0, word);
    }

    boolean peekIs(int ahead, String word) {
      return at + ahead < tokens.size() && tokens.get(at + ahead).is(word);
    }

    Token next() {
      return tokens.get(at++);
    }

    boolean accept(String word) {
      if (peekIs(word)) {
        at++;
        return true;
      }
      return false;
    }

    void expect(String word) {
      if (!accept(word)) {
        throw new IndexOutOfBoundsException("expected " + word);
      }
    }

    Token number() {
      Token t = next();
      if (!t.number()) {
        throw new NumberFormatException("not a number: " + t.text());
      }
      return t;
    }
  }

  /**
   * A token of the statement's text.
   *
   * @param kind 'w' word, 'q' back-quoted identifier, 's' string literal, 'n' number, 'p' punctuation
   * @param text the token as written
   * @param value a string's or back-quoted identifier's value (unescaped), else the text
   * @param start offset of its first character
   * @param end offset after its last character
   */
  record Token(char kind, String text, String value, int start, int end) {
    boolean is(String word) {
      return (kind == 'w' || kind == 'p') && text.toUpperCase(Locale.ROOT).equals(word);
    }

    boolean string() {
      return kind == 's';
    }

    boolean number() {
      return kind == 'n';
    }

    boolean identifier() {
      return kind == 'w' || kind == 'q';
    }

    static List<Token> scan(String s) {
      List<Token> out = new ArrayList<>();
      int i = 0;
      int n = s.length();
      while (i < n) {
        char ch = s.charAt(i);
        if (Character.isWhitespace(ch)) {
          i++;
        } else if (ch == '-' && i + 1 < n && s.charAt(i + 1) == '-') {
          while (i < n && s.charAt(i) != '\n') {
            i++;
          }
        } else if (ch == '/' && i + 1 < n && s.charAt(i + 1) == '*') {
          int close = s.indexOf("*/", i + 2);
          if (close < 0) {
            throw new IllegalArgumentException("unterminated comment");
          }
          i = close + 2;
        } else if (ch == '`') {
          StringBuilder v = new StringBuilder();
          int j = i + 1;
          while (true) {
            if (j >= n) {
              throw new IllegalArgumentException("unterminated identifier");
            }
            if (s.charAt(j) == '`') {
              if (j + 1 < n && s.charAt(j + 1) == '`') {
                v.append('`');
                j += 2;
                continue;
              }
              break;
            }
            v.append(s.charAt(j++));
          }
          out.add(new Token('q', s.substring(i, j + 1), v.toString(), i, j + 1));
          i = j + 1;
        } else if (ch == '\'' || ch == '"') {
          StringBuilder v = new StringBuilder();
          int j = i + 1;
          while (true) {
            if (j >= n) {
              throw new IllegalArgumentException("unterminated string");
            }
            char d = s.charAt(j);
            if (d == '\\' && j + 1 < n) {
              v.append(s.charAt(j + 1));
              j += 2;
            } else if (d == ch) {
              break;
            } else {
              v.append(d);
              j++;
            }
          }
          out.add(new Token('s', s.substring(i, j + 1), v.toString(), i, j + 1));
          i = j + 1;
        } else if (Character.isDigit(ch) || ch == '.' && i + 1 < n && Character.isDigit(s.charAt(i + 1))
            && (out.isEmpty() || !out.get(out.size() - 1).identifier())) {
          int j = i;
          while (j < n && (Character.isDigit(s.charAt(j)) || s.charAt(j) == '.')) {
            j++;
          }
          out.add(new Token('n', s.substring(i, j), s.substring(i, j), i, j));
          i = j;
        } else if (Character.isLetter(ch) || ch == '_') {
          int j = i;
          while (j < n && (Character.isLetterOrDigit(s.charAt(j)) || s.charAt(j) == '_')) {
            j++;
          }
          out.add(new Token('w', s.substring(i, j), s.substring(i, j), i, j));
          i = j;
        } else {
          out.add(new Token('p', String.valueOf(ch), String.valueOf(ch), i, i + 1));
          i++;
        }
      }
      return out;
    }
  }
}
