// A stand-in for Hive's interface (hive-service, as shipped in Spark's
// spark-hive-thriftserver jar), so that GateAuthenticator compiles without Spark. Only
// GateAuthenticator.class is shipped; at run time the Thrift Server's own interface is used.
// Its exact shape, from `javap -cp spark-hive-thriftserver_2.13-4.3.0.jar
// org.apache.hive.service.auth.PasswdAuthenticationProvider`:
package org.apache.hive.service.auth;

import javax.security.sasl.AuthenticationException;

public interface PasswdAuthenticationProvider {
  void Authenticate(String user, String password) throws AuthenticationException;
}
