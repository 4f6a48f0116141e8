package io.filecommit.connect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.apache.spark.connect.proto.AddArtifactsRequest;
import org.apache.spark.connect.proto.ConfigRequest;
import org.apache.spark.connect.proto.ExecutePlanRequest;
import org.apache.spark.connect.proto.UserContext;
import org.junit.jupiter.api.Test;

/** What the authenticator reads of every Spark Connect request: the claimed user id and the session id. */
class AuthenticationInterceptorTest {
  @Test
  void everyRequestTypeNamesItsUserAndSession() {
    UserContext alice = UserContext.newBuilder().setUserId("alice").build();
    Object[] requests = {
        ExecutePlanRequest.newBuilder().setSessionId("s1").setUserContext(alice).build(),
        ConfigRequest.newBuilder().setSessionId("s1").setUserContext(alice).build(),
        AddArtifactsRequest.newBuilder().setSessionId("s1").setUserContext(alice).build()};
    for (Object r : requests) {
      assertEquals("alice", AuthenticationInterceptor.field(r, "user_context", "user_id"), r.getClass().getName());
      assertEquals("s1", AuthenticationInterceptor.field(r, "session_id", null));
    }
    // No user context: an empty user id, which names no principal (the request is refused).
    assertEquals("", AuthenticationInterceptor.field(ConfigRequest.newBuilder().setSessionId("s1").build(),
        "user_context", "user_id"));
    assertNull(AuthenticationInterceptor.field("not a message", "user_context", "user_id"));
    assertNull(AuthenticationInterceptor.field(ConfigRequest.getDefaultInstance(), "no_such_field", null));
  }
}
