package org.kumiho.spark;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import javax.security.sasl.AuthenticationException;
import org.apache.hive.service.auth.PasswdAuthenticationProvider;

/**
 * The Spark Thrift Server's password check when kumiho-spark-engine runs it
 * ({@code hive.server2.authentication=CUSTOM}, {@code hive.server2.custom.authentication.class}
 * naming this class): admits only the engine's gate.
 *
 * <p>The supervisor makes a fresh random token for each engine and gives it to the Thrift
 * Server's JVM in {@code KUMIHO_SPARK_GATE_SECRET} (never on a command line); the gate presents
 * it as its SASL PLAIN password. Any other password, an empty one included, is refused, so a
 * local user who finds the Thrift Server's loopback port cannot bypass the gate. The token is
 * not the cluster's internal secret: code running in this JVM can read its environment.
 *
 * <p>Hive instantiates this class with its no-argument constructor for each login.
 */
public final class GateAuthenticator implements PasswdAuthenticationProvider {
  /** The environment variable holding the token. */
  public static final String SECRET_VARIABLE = "KUMIHO_SPARK_GATE_SECRET";

  private static final String ADMITS_ONLY =
      "this Spark Thrift Server admits only the kumiho-spark-engine gate in front of it;"
          + " connect through Kumiho";

  /** The token's UTF-8 bytes; null when the variable is unset or empty (nobody is admitted). */
  private final byte[] secret;

  public GateAuthenticator() {
    String value = System.getenv(SECRET_VARIABLE);
    this.secret =
        value == null || value.isEmpty() ? null : value.getBytes(StandardCharsets.UTF_8);
  }

  @Override
  public void Authenticate(String user, String password) throws AuthenticationException {
    if (secret == null) {
      throw new AuthenticationException(
          SECRET_VARIABLE + " is not set in the Spark Thrift Server's environment, so nobody is"
              + " admitted: " + ADMITS_ONLY);
    }
    if (password == null || password.isEmpty()) {
      throw new AuthenticationException(
          "no password given for user '" + user + "': " + ADMITS_ONLY);
    }
    // Constant time: MessageDigest.isEqual does not stop at the first differing byte.
    if (!MessageDigest.isEqual(secret, password.getBytes(StandardCharsets.UTF_8))) {
      throw new AuthenticationException("wrong password for user '" + user + "': " + ADMITS_ONLY);
    }
  }
}
