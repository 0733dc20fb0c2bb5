"""The exceptions robota raises, in one tree.

Every error robota raises on purpose descends from ``RobotaError``, whichever package defines
it (``tests/packaging/test_error_tree.py`` walks them all and checks this drawing names each).
A class that callers also catch by a builtin keeps that builtin as a second base, shown in
brackets::

    RobotaError                        every error robota raises on purpose
    ├── KernelError                    the actor kernel (robota.core)
    │   ├── SupervisorFailed           restart intensity tripped; escalates to the parent
    │   ├── RequestTimeout             [TimeoutError] a request across the bridge got no reply
    │   ├── CrashRequested             raised inside an actor by ``testing.crash()``
    │   ├── TimerLimitExceeded         more timers pending than ``Timers.limit``
    │   └── OutboxClosed               a connection's outbox overflowed and was cut off
    ├── ConfigError                    bad config.yaml/.env/paths: file, key, found, expected
    ├── InitLockTimeout                [TimeoutError] another ``robota init`` holds the lock
    ├── PluginError                    an entry-point plugin failed to load or is not one
    ├── StoreError                     the SQLite store cannot be opened, migrated or written
    │   ├── TaskImmobile               a turn's write for a task a handoff moves, moved or holds
    │   └── _BatchFailed               the writer's batch failed as a whole (internal)
    ├── EventFormatError               [ValueError] JSON that is not a valid turn event
    ├── ThrottleError                  [RuntimeError] the card throttle driven out of order
    ├── SendError                      a transport's card sink call failed
    │   ├── TransientSendError         worth retrying (``retry_after``)
    │   └── PermanentSendError         the same call would fail again
    ├── _Failure                       one card delivery step failed (internal to cards)
    ├── ControlError                   reaching or running the local host (robota.core.control)
    │   ├── NoHostRunning              no socket, or nobody listens on it
    │   ├── HostRefused                the host answered with an error reply
    │   ├── HostUnreachable            the host did not answer in time, or hung up
    │   ├── SocketInUse                a live host already listens on the socket
    │   ├── HostAlreadyRunning         the profile's host lock is held
    │   ├── UnsafeRuntimeDir           the runtime directory is not this user's own
    │   ├── BadHostState               [ValueError] host.json is not a host's state
    │   ├── Refused                    a request refused while decoding it (its error code)
    │   ├── HandlerError               a handler refuses its request with its own code
    │   ├── BadRegistration            [ValueError] a file that is not a session's registration
    │   └── SessionUnverified          a background session whose owner cannot be verified live
    ├── ProtocolError                  [ValueError] not the wire protocol: path, expected, found
    │   ├── MalformedReply             a line that is no reply (robota.core.protocol)
    │   ├── WireError                  a frame that is not one of the attach carrier's
    │   └── SurfaceProtocolError       a surface client's frame outside the vocabulary
    ├── LinkEnded                      a front end's subscription to its route ended
    ├── Overflowed                     a front end fell too far behind its route (the reason)
    ├── TaskNotResolved                a front end's task reference (``-r``) names no one task
    │   ├── TaskNotFound               no task has that id, id prefix or title
    │   ├── AmbiguousTask              several tasks match it
    │   └── NoTaskGiven                ``robota task``: TASK omitted, no agent's task in the env
    ├── GroupRefused                   a transport would not make a group chat (``GroupMaker``)
    ├── AgentError                     an agent, its process or its protocol (robota.runtimes)
    │   ├── AgentExited                the agent process ended; the supervisor restarts it
    │   ├── RpcError                   the agent answered a JSON-RPC request with an error
    │   ├── RpcTimeout                 no JSON-RPC response within the request's timeout
    │   ├── ConnectionLost             the agent's stdout ended before the response
    │   ├── MethodNotFound             robota serves no such agent-to-client method (-32601)
    │   ├── RequestRefused             robota refuses an agent's request with a JSON-RPC code
    │   │   └── HostError              an ACP file or terminal request refused
    │   ├── SessionBusy                an ACP prompt is already running in the session
    │   ├── SteerUnsupported           ACP cannot add input to a running turn
    │   ├── ImagesUnsupported          the agent takes no image prompts
    │   ├── SteerRejected              the App Server turn to steer is no longer running
    │   ├── SteerRefusedError          the text did not reach a running turn (driver)
    │   ├── PromptRefused              the prompt was not sent (driver)
    │   └── SessionRefused             the agent cannot open the session as asked (driver)
    ├── FeishuError                    the Feishu/Lark transport (robota.transports.feishu)
    │   ├── FrameError                 [ValueError] bytes that are not a pbbp2 frame
    │   ├── ApiError                   a REST call failed: HTTP status, platform code and msg
    │   ├── ConnectionRefused          the platform refused the long connection for good
    │   ├── TooLarge                   a download went past its limit (``size`` seen)
    │   └── RegistrationFailed         the one-click app registration cannot go on (init)
    ├── Unanswered                     an HTTP call got no answer (robota.transports._direct)
    ├── SlackError                     the Slack transport (robota.transports.slack)
    │   ├── ApiError                   a Web API call failed: method, HTTP status, Slack's error
    │   │   └── RateLimited            a 429 its caller would not wait for (``after`` seconds)
    │   └── ConnectionRefused          Socket Mode refused for good (app token, link_disabled)
    ├── SkillError                     ``robota skills``: a directory robota must not change
    ├── AutostartError                 ``robota server autostart``: no service manager, or it failed
    ├── UsageError                     print mode: the command line or its session is wrong
    ├── TaskHeld                       print mode: the task is another live process's (exit 1)
    ├── TrustError                     workspace trust (robota.core.trust)
    │   └── TrustStoreUnreadable       the trust store cannot be read or is damaged: fail closed
    ├── WorkspaceRefused               a headless start in a workspace nobody trusted (exit 2)
    ├── StagingFailed                  a handoff payload that does not stage or read back as stated
    ├── AttachRefused                  ``robota --attach``: the session did not take the attach
    │   └── _OlderSession              it refused ``protocol``: asked again as version 1 (internal)
    ├── PreviewError                   [ValueError] a line ``robota cards preview`` cannot draw
    ├── McpError                       ``robota mcp serve`` (robota.mcp)
    │   ├── BadArgument                [ValueError] a tool's argument: field, found, expected
    │   ├── ToolRefused                a backend refused a tool call (shown as the tool's error)
    │   └── BadTokenFile               [ValueError] the HTTP token file cannot be written as asked
    ├── MeshError                      the device mesh (robota.mesh)
    │   ├── Refused                    a certificate, list or device refused (a closed reason)
    │   │   └── Malformed              [ValueError] bytes that are not the signed object claimed
    │   ├── CredentialStoreError       the credential store or a stored key failed: fail closed
    │   ├── NoTerminal                 no controlling terminal to show or read a secret on
    │   ├── BadCode                    [ValueError] typed text that is no pairing code (a typo)
    │   ├── PairingFailed              a pairing refused or ended (its closed reason)
    │   ├── BadFrame                   [ProtocolError] a link frame outside the vocabulary
    │   ├── AlreadyInitialized         ``robota mesh init`` on a device that has its identity
    │   ├── DeviceNotFound             DEVICE names no device of the roster, or several
    │   ├── GrantRefused               a handoff grant or acknowledgement refused (closed reason)
    │   ├── HandoffBusy                a push while a turn runs, a prompt waits or an approval
    │   ├── PayloadMismatch            staged handoff bytes not what the manifest states
    │   ├── IllegalTransition          a handoff phase move the tables do not allow
    │   └── ReceiveFailed              an accepted file's copy did not match its offer (removed)
    └── EngineStopped                  [RuntimeError] the TUI's engine is not running

``Terminated`` (robota.core, a ``SystemExit``) stands outside the tree on purpose: it is the
clean end of a run on SIGTERM/SIGHUP, not an error, and ``except Exception`` must not stop it.

Exceptions raised by user code inside an actor are never wrapped: they travel as they are, either as
the crash reason a supervisor logs, or as the failed reply of a request.
"""

from __future__ import annotations

__all__ = [
    "RobotaError",
    "KernelError",
    "SupervisorFailed",
    "RequestTimeout",
    "CrashRequested",
    "ConfigError",
    "StoreError",
    "AgentError",
]


class RobotaError(Exception):
    """Base class of every error robota raises on purpose."""


class KernelError(RobotaError):
    """An error of the actor kernel."""


class SupervisorFailed(KernelError):
    """A supervisor saw more failures than its intensity allows within its period.

    Its children have been stopped; the parent treats this as the supervisor's crash.
    """

    def __init__(self, supervisor: str, failures: int, period: float, last: BaseException | None):
        self.supervisor = supervisor
        self.failures = failures
        self.period = period
        self.last = last
        super().__init__(
            f"supervisor {supervisor!r} gave up: {failures} failures within {period:g} s"
            + (f" (last: {type(last).__name__}: {last})" if last is not None else "")
        )


class RequestTimeout(KernelError, TimeoutError):
    """A request sent across the bridge got no reply within its timeout."""


class CrashRequested(KernelError):
    """Raised inside an actor on purpose, by ``robota.core.testing.crash``."""


class ConfigError(RobotaError):
    """Configuration is invalid. The message names the file, the key path, what was found and
    what was expected, so a user can fix it without reading code."""

    def __init__(
        self,
        file: str | None,
        key: str,
        found: str,
        expected: str,
    ) -> None:
        self.file = file
        self.key = key
        self.found = found
        self.expected = expected
        where = f"{file}: " if file else ""
        super().__init__(f"{where}{key}: found {found}, expected {expected}")


class StoreError(RobotaError):
    """The store cannot be opened, migrated or written."""


class AgentError(RobotaError):
    """An agent, its process or its protocol failed or refused; ``robota.runtimes`` raises
    the subclasses (see the tree above)."""
