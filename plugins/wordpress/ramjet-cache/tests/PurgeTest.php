<?php
/**
 * Tests of purge collection and delivery: header, admin API, queue.
 *
 * @package RamjetCache
 */

use PHPUnit\Framework\TestCase;
use Ramjet\Cache\AdminClient;
use Ramjet\Cache\Purge;
use Ramjet\Cache\Queue;
use Ramjet\Cache\Settings;

/**
 * Purge, Queue and AdminClient.
 */
final class PurgeTest extends TestCase {

	/** @var string[] Header lines sent. */
	private $sent = array();

	protected function setUp(): void {
		WpStubs::reset();
		$this->sent = array();
	}

	private function purge( $behind_proxy, $admin_url = 'http://127.0.0.1:9090' ) {
		$settings = new Settings(
			array(
				'admin_url'   => $admin_url,
				'admin_token' => 'tok',
			)
		);
		$sent     = &$this->sent;
		return new Purge(
			new AdminClient( $settings ),
			new Queue( Settings::QUEUE_OPTION, 'rjabc_1' ),
			$behind_proxy,
			static function ( $line ) use ( &$sent ) {
				$sent[] = $line;
			}
		);
	}

	public function test_header_value_grammar() {
		$this->assertSame( '', Purge::header_value( array(), array(), false ) );
		$this->assertSame( 'a, b', Purge::header_value( array( 'a', 'b' ), array(), false ) );
		$this->assertSame(
			'private, *; a, /post-b/, /?p=3',
			Purge::header_value( array( 'a' ), array( 'http://wp.test/post-b/', 'https://wp.test/?p=3' ), true )
		);
	}

	public function test_collects_dedupes_and_sends_one_header_when_behind_ramjet() {
		$purge = $this->purge( true );
		$purge->add_tags( array( 'a', 'b' ) );
		$purge->add_tags( array( 'b', '', 'c' ) );
		$purge->add_url( 'http://wp.test/x/' );
		$purge->add_url( 'not a url' );
		$purge->add_private_all();
		$purge->deliver_in_header();
		$this->assertSame( array( 'X-LiteSpeed-Purge: private, *; a, b, c, /x/' ), $this->sent );
		$this->assertFalse( $purge->pending() );
		$this->assertTrue( $purge->deliver_now() );
		$this->assertSame( array(), WpStubs::$requests, 'nothing left for the API' );
	}

	public function test_header_carries_queued_purges_and_empties_the_queue() {
		WpStubs::$options[ Settings::QUEUE_OPTION ] = array(
			'tags' => array( 'old' ),
			'urls' => array(),
		);
		$purge = $this->purge( true );
		$purge->add_tags( array( 'new' ) );
		$purge->deliver_in_header();
		$this->assertSame( array( 'X-LiteSpeed-Purge: old, new' ), $this->sent );
		$this->assertArrayNotHasKey( Settings::QUEUE_OPTION, WpStubs::$options );
	}

	public function test_without_ramjet_in_front_purges_go_to_the_admin_api() {
		$purge = $this->purge( false );
		$purge->add_tags( array( 'a', 'b' ) );
		$purge->add_url( 'http://wp.test:8080/x/?q=1' );
		$purge->add_private_all();
		$purge->deliver_in_header();
		$this->assertSame( array(), $this->sent );
		$this->assertTrue( $purge->deliver_now() );
		$this->assertCount( 2, WpStubs::$requests );
		list( $url, $args ) = WpStubs::$requests[0];
		$this->assertSame( 'http://127.0.0.1:9090/purge', $url );
		$this->assertSame( 'POST', $args['method'] );
		$this->assertSame( 'Bearer tok', $args['headers']['Authorization'] );
		$this->assertSame( 'application/json', $args['headers']['Content-Type'] );
		$this->assertSame( array( 'tags' => array( 'a', 'b' ) ), json_decode( $args['body'], true ), 'the private purge only makes sense in a header' );
		$this->assertSame(
			array(
				'urls' => array( '/x/?q=1' ),
				'host' => 'wp.test:8080',
			),
			json_decode( WpStubs::$requests[1][1]['body'], true )
		);
	}

	public function test_failed_api_call_queues_and_the_next_call_sends_the_queue() {
		WpStubs::$response = array(
			'response' => array( 'code' => 401 ),
			'body'     => '{"error":"unauthorized"}',
		);
		$purge = $this->purge( false );
		$purge->add_tags( array( 'a' ) );
		$err = $purge->deliver_now();
		$this->assertTrue( is_wp_error( $err ) );
		$this->assertStringContainsString( 'HTTP 401', $err->get_error_message() );
		$this->assertSame( array( 'a' ), WpStubs::$options[ Settings::QUEUE_OPTION ]['tags'] );

		WpStubs::$response = array(
			'response' => array( 'code' => 200 ),
			'body'     => '{}',
		);
		$purge->add_tags( array( 'b' ) );
		$this->assertTrue( $purge->deliver_now() );
		$this->assertSame( array( 'tags' => array( 'a', 'b' ) ), json_decode( end( WpStubs::$requests )[1]['body'], true ) );
		$this->assertArrayNotHasKey( Settings::QUEUE_OPTION, WpStubs::$options );
	}

	public function test_unconfigured_api_queues_for_the_next_request_through_ramjet() {
		$purge = $this->purge( false, '' );
		$purge->add_tags( array( 'a' ) );
		$this->assertTrue( is_wp_error( $purge->deliver_now() ) );
		$this->assertSame( array(), WpStubs::$requests );
		$this->assertSame( array( 'a' ), WpStubs::$options[ Settings::QUEUE_OPTION ]['tags'] );
	}

	public function test_overflowing_queue_becomes_a_site_purge() {
		$queue = new Queue( Settings::QUEUE_OPTION, 'rjabc_1' );
		$queue->add( range( 1, Queue::MAX_ITEMS ), array() );
		$queue->add( array( 'one-more' ), array() );
		$this->assertSame(
			array(
				'tags' => array( 'rjabc_1' ),
				'urls' => array(),
			),
			$queue->peek()
		);
	}

	public function test_urls_are_grouped_by_host() {
		$this->assertSame(
			array(
				'a.test'      => array( '/', '/x?y=1' ),
				'b.test:8080' => array( '/z' ),
			),
			AdminClient::paths_by_host( array( 'http://a.test', 'http://A.test/x?y=1', 'https://b.test:8080/z', '/relative' ) )
		);
	}
}
