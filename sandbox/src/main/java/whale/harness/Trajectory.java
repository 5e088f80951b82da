package whale.harness;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import whale.chat.ChatCall;
import whale.chat.ChatTemplate;
import whale.chat.Message;
import whale.chat.ToolCalls;
import whale.model.SftExample;

/**
 * What RSFT trains on from one episode. A {@code generate} call is one example: its prompt as
 * context, its completion trained. Chat calls that continue one conversation (each later call's
 * messages start with the earlier call's messages and reply) are ONE example: the whole conversation
 * rendered by the model's template, the loss on every turn the model wrote (its end-of-turn token
 * included) and on nothing the system, the user, a tool or the harness wrote; no token twice.
 *
 * <p>The model's turns are found by the template's {@code {% generation %}} blocks when it has them
 * (as transformers' {@code return_assistant_tokens_mask}), otherwise by rendering each prefix of the
 * conversation: a turn starts where the prompt that opened it ends, and ends after the first EOS
 * token in it. A template whose renderings are not prefixes of each other gives up the conversation
 * form, and each chat call is trained alone (its prompt, then its reply and EOS).
 */
public final class Trajectory {
  private Trajectory() {}

  public static List<SftExample> examples(List<ModelCall> calls, ChatTemplate template) {
    List<SftExample> out = new ArrayList<>();
    for (int k = 0; k < calls.size(); k++) {
      ModelCall c = calls.get(k);
      if (c.chat() == null) {
        out.add(new SftExample(c.prompt(), c.completion()));
      } else if (!continuedLater(calls, k)) {
        out.addAll(conversation(calls, k, template));
      }
    }
    return out;
  }

  /** The conversation of chat call {@code k}: its messages and the reply the model gave. */
  static List<Message> withReply(ModelCall c) {
    List<Message> m = new ArrayList<>(c.chat().messages());
    m.add(ToolCalls.parse(c.completion()).message());
    return m;
  }

  private static boolean continuedLater(List<ModelCall> calls, int k) {
    List<Message> mine = withReply(calls.get(k));
    for (int j = k + 1; j < calls.size(); j++) {
      ChatCall later = calls.get(j).chat();
      if (later != null && startsWith(later.messages(), mine)) {
        return true;
      }
    }
    return false;
  }

  private static boolean startsWith(List<Message> list, List<Message> prefix) {
    return list.size() >= prefix.size() && list.subList(0, prefix.size()).equals(prefix);
  }

  /** The example(s) of the conversation that ends with chat call {@code last}. */
  private static List<SftExample> conversation(List<ModelCall> calls, int last, ChatTemplate template) {
    ModelCall end = calls.get(last);
    List<Message> full = withReply(end);
    // the model's turns: the reply of every chat call of this conversation, by message index
    Set<Integer> modelTurns = new TreeSet<>();
    List<ModelCall> chain = new ArrayList<>();
    for (int j = 0; j <= last; j++) {
      ModelCall c = calls.get(j);
      if (c.chat() != null && startsWith(full, withReply(c))) {
        modelTurns.add(c.chat().messages().size());
        chain.add(c);
      }
    }
    SftExample ex = conversation(full, end.chat().tools(), modelTurns, template);
    if (ex != null) {
      return List.of(ex);
    }
    List<SftExample> alone = new ArrayList<>();
    for (ModelCall c : chain) {
      alone.add(new SftExample(c.prompt(), c.completion() + template.eosToken()));
    }
    return alone;
  }

  /**
   * {@code messages} rendered as one sequence, the assistant messages at {@code modelTurns} trained;
   * null when the template's renderings of the conversation's prefixes are not prefixes of it.
   */
  public static SftExample conversation(List<Message> messages, List<whale.chat.ToolSchema> tools,
      Set<Integer> modelTurns, ChatTemplate template) {
    ChatTemplate.Rendered whole = template.render(messages, tools, false);
    String text = whole.text();
    List<int[]> spans = new ArrayList<>();
    List<Integer> assistants = new ArrayList<>();
    for (int i = 0; i < messages.size(); i++) {
      if (messages.get(i).role().equals("assistant")) {
        assistants.add(i);
      }
    }
    if (!whole.generationSpans().isEmpty()) {
      if (whole.generationSpans().size() != assistants.size()) {
        return null; // blocks that do not correspond to assistant messages one to one
      }
      for (int a = 0; a < assistants.size(); a++) {
        if (modelTurns.contains(assistants.get(a))) {
          spans.add(whole.generationSpans().get(a));
        }
      }
    } else {
      for (int i : new TreeSet<>(modelTurns)) { // in conversation order, whatever the set's
        String opened = template.render(messages.subList(0, i), tools, true).text();
        String closed = template.render(messages.subList(0, i + 1), tools, false).text();
        if (!text.startsWith(closed) || !closed.startsWith(opened)) {
          return null;
        }
        String eos = template.eosToken();
        int eosAt = eos.isEmpty() ? -1 : closed.indexOf(eos, opened.length());
        spans.add(new int[] {opened.length(), eosAt < 0 ? closed.length() : eosAt + eos.length()});
      }
    }
    List<String> parts = new ArrayList<>();
    int at = 0;
    Set<Integer> starts = new HashSet<>();
    for (int[] s : spans) {
      if (s[0] < at || !starts.add(s[0])) {
        return null; // overlapping turns would train a token twice
      }
      parts.add(text.substring(at, s[0]));
      parts.add(text.substring(s[0], s[1]));
      at = s[1];
    }
    if (parts.isEmpty()) {
      return null;
    }
    if (at < text.length()) {
      // what follows the last turn (a template's trailing newline): in the sequence, never a target
      parts.add(text.substring(at));
      parts.add("");
    }
    return new SftExample(parts);
  }
}
