import java.lang.reflect.Field;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

/**
 * DynamoDB Local listening on 127.0.0.1 only. The jar has no host option (its -help lists -port, -inMemory, -dbPath,
 * -sharedDb, -cors, -delayTransientStatuses, -optimizeDbBeforeStartup, -disableTelemetry, -version) and its server is a
 * Jetty Server built with a port alone, which binds every interface. So this builds the jar's own server from the same
 * command line (ServerRunner.createServerFromCommandLineArgs, what the jar's main does), sets 127.0.0.1 as the host
 * of its connector before it starts, and starts it. Run as a single source file (java's source launcher, JEP 330), with
 * the jar on the class path: test/support/dynamodbLocal.ts.
 */
public class LoopbackDynamoDbLocal {
  public static void main(String[] args) throws Exception {
    DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
    Field field = DynamoDBProxyServer.class.getDeclaredField("server");
    field.setAccessible(true);
    Server server = (Server) field.get(proxy);
    int bound = 0;
    for (Connector connector : server.getConnectors()) {
      if (connector instanceof ServerConnector serverConnector) {
        serverConnector.setHost("127.0.0.1");
        bound++;
      }
    }
    if (bound == 0) throw new IllegalStateException("DynamoDB Local has no connector to bind to 127.0.0.1");
    proxy.start();
  }
}
